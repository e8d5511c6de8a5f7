import sys

import torch

NEW = sys.version_info >= (3, 9)


def smart_inference_mode():
    """The function run with grad off: inference_mode where it exists, no_grad elsewhere."""

    def decorate(fn):
        return (torch.inference_mode if NEW else torch.no_grad)()(fn)

    return decorate
