"""Torch's own records of one run (its log artifacts and structured trace), and what is read from them."""
