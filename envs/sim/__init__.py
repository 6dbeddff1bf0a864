"""Isaac Lab glue shared by the tasks: physics settings per device, the offline ground and robot articulations
(MJCF → USD, cached), the NaN guard, the datasheet actuator chain as an Isaac Lab actuator, and gravity torque g(q).

Importing this package loads nothing; its modules import Isaac Lab (or torch) themselves.
"""
