import torch.nn as nn
from torch_utils import smart_inference_mode


@smart_inference_mode()
def run(model, data, history):
    for x, y in data:
        history.append(nn.functional.mse_loss(model(x), y))
    return sum(history) / len(history)
