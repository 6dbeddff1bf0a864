"""The training engine against MuJoCo C: the box–box repro for upstream and the canonical scenes' agreement.

    python scripts/engine_agreement.py --out docs/results/engine_agreement.json

Prints the offset-CoM box table (each engine's default box–box path, then the exact routine realgap uses), the
process-wide leak (run in a child process of its own), a simple body's inverse weights in both engines and each
canonical scene's figures in both engines.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="write every row as JSON here")
    args = parser.parse_args()
    from realgap.envs.sim2sim import engine_agreement as ea
    from realgap.envs.sim2sim.engine_scenes import CANONICAL_SCENES

    repro = ea.upstream_repro()
    print("box on the table | engine | contacts | max penetration (mm) | max angular speed (rad/s) | solver iterations")
    for row in repro:
        path = "exact box-box" if row["exact_box_box"] else "default"
        for engine in ("mujoco_c", "mujoco_warp"):
            f = row[engine]
            print(
                f"CoM {row['com_offset_m'] * 100:.1f} cm, {path} | {engine} | {f['contacts']:.2f} | "
                f"{f['max_penetration_m'] * 1e3:.3f} | {f['max_angular_speed']:.2g} | {f['solver_iterations']:.2f}"
            )
    code = "import json; from realgap.envs.sim2sim.engine_agreement import leak_repro; print(json.dumps(leak_repro()))"
    leak = json.loads(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    print(
        f"leak: exact-routine model {leak['exact_first_contacts']:.2f} contacts, then a default model in the same "
        f"process {leak['default_after_contacts']:.2f}; refused: {leak['default_after_refused']}"
    )
    invweights = ea.simple_body_invweights()
    for row in invweights:
        print(
            f"simple body, armature {row['armature']:g} kg: dof inverse weight MuJoCo C {row['mujoco_c']:.4f}, "
            f"MuJoCo-Warp {row['mujoco_warp']:.4f} 1/kg"
        )
    scenes = [ea.compare_scene(s) for s in CANONICAL_SCENES]
    for r in scenes:
        w, c = r["training_engine"], r["mujoco_c"]
        print(
            f"{r['scene']['name']}: contacts {w['contacts']:.2f} / {c['contacts']:.2f}, penetration "
            f"{w['max_penetration_m'] * 1e6:.2f} / {c['max_penetration_m'] * 1e6:.2f} um, normal force "
            f"{w['normal_force_n']:.4f} / {c['normal_force_n']:.4f} N, position diff {r['max_position_diff_m']:.2g} m, "
            f"agree: {all(r['agree'].values())}"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {"upstream_repro": repro, "leak": leak, "simple_body_invweights": invweights, "scenes": scenes},
                indent=1,
            )
            + "\n"
        )
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
