"""Workshops: the presenter's side of a session and the follower's app."""
