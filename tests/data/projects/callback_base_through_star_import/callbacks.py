"""The callback machinery: a callback runs the method named after each event it is sent."""
import torch

__all__ = ["Callback", "Event", "new_accumulator"]


class Event:
    COMPUTE_LOSS = "compute_loss"
    AFTER_STEP = "after_step"


class Callback:
    order = 0

    def __call__(self, event):
        handler = getattr(self, event, None)
        if handler is not None:
            handler()


def new_accumulator():
    # the batch's total loss starts as a leaf that requires grad, so that backward() always has a graph
    return torch.zeros((), requires_grad=True)
