"""Contact model as data: MuJoCo soft-constraint parameters, their closed forms, the drop lab and identification."""
