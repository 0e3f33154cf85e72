check tests/prims.lean
