"""The grasp task checked: a scripted grasp for the ee_pose_delta space (scripted) and how fast a grasp policy
moves fingers and arm against the datasheet (speeds). Importing this package loads nothing.
"""
