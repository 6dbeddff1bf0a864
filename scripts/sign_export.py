"""Sign exports so the robot side can tell who produced one: Ed25519 keys, a signature beside the export.

    python scripts/sign_export.py keygen --key ~/.realgap/signing_key        # + signing_key.pub (share this one)
    python scripts/sign_export.py sign --policy configs/policies/balance_g1 --key ~/.realgap/signing_key
    python scripts/sign_export.py verify --policy configs/policies/balance_g1 --trust ~/.realgap/signing_key.pub
    realgap deploy --policy configs/policies/balance_g1 --robot mujoco \\
        --trust ~/.realgap/signing_key.pub --require_signature

``keygen`` writes a private key (owner-only, never overwritten) and its public key ``<key>.pub``; ``sign`` checks the
export (every load check) and writes ``policy.sig`` over its digest; ``verify`` checks the export and its signature
against the public keys of ``--trust`` (files, or folders of ``*.pub``). Format: docs/policy_format.md ("Signed
exports"). Bad input exits with status 2 and one message.
"""

from __future__ import annotations

import argparse

from realgap.envs.export.sign import sign_export
from realgap.envs.format.signature import generate_key
from realgap.envs.format.verify import check_export_signature
from realgap.envs.run.cli import parser, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("policy"))
    p.add_argument("action", choices=("keygen", "sign", "verify"), help="what to do")
    p.add_argument("--key", default=None, help="keygen / sign: the private key file (PEM)")
    p.add_argument("--trust", nargs="+", default=[], metavar="PUB", help="verify: trusted public keys (or folders)")
    args = p.parse_args(argv)
    need = {"keygen": ("key",), "sign": ("key", "policy"), "verify": ("policy", "trust")}[args.action]
    if missing := [f"--{n}" for n in need if not getattr(args, n)]:
        p.error(f"{args.action} needs {' and '.join(missing)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.action == "keygen":
        private, public = generate_key(args.key)
        print(
            f"[realgap] wrote private key {private} (mode 0600: keep it on the training side) and public key {public}"
        )
    elif args.action == "sign":
        print(f"[realgap] signed: {sign_export(args.policy, args.key)}")
    else:
        print(f"[realgap] {check_export_signature(args.policy, args.trust, require=True)}")
    return 0


if __name__ == "__main__":
    from realgap.envs.format import MetadataError
    from realgap.envs.run.cli import run_cli

    run_cli(main, extra_errors=(MetadataError, FileExistsError, ModuleNotFoundError))
