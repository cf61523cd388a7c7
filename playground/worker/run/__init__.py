"""One run in the child: the experiment and its phases, each a function returning a value."""
