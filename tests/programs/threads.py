"""Two compiled callables, one called only in a worker thread, the other in the main thread."""

import threading

import torch


@torch.compile(backend="eager")
def in_thread(x):
    return x.cos() + 1


@torch.compile(backend="eager")
def in_main(x):
    y = x * 3
    print("a break in main")
    return y - 1


def work() -> None:
    for n in (4, 4, 6):
        in_thread(torch.ones(n))


t = threading.Thread(target=work)
t.start()
t.join()
for _ in range(2):
    in_main(torch.ones(3))
print("done")
