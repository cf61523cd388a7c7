"""Whether eager and compiled agree: the equivalence phase and everything it compares with.

`equivalence.py` judges each call as torch's accuracy harness does, leaf by leaf
(`leaves.py`, `value_walk.py`), tensors in `tensor_diff.py`, plain Python values in
`python_values.py`, gradients in `gradients.py`, under the tolerances of `tolerances.py`;
`reference.py` is what the eager and float64 reference processes run to give it the other side.
"""
