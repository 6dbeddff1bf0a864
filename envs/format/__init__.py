"""The exported policy format's integrity and provenance rules (stdlib only: below both export and deploy)."""
