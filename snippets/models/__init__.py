"""The gallery's real models: architectures people bring, from `transformers` and `torch.nn`.

Small configurations with random weights: nothing is downloaded. The `transformers` ones need
the optional extra (`pip install compile-playground[models]`). Like the top-level gallery, each
file is a snippet that also runs on its own, with what torch does to it in its header.
"""
