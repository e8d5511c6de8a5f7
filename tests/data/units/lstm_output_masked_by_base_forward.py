"""pytorch-models' RNN wrappers before their fix: the base class's `forward` calls `forward_cell`,
which each subclass writes, and zeroes the padding positions of the output in place. The LSTM
subclass's output is what torch's LSTM kernel keeps for backward (CPU and cuDNN), so a backward
through the result raises "modified by an inplace operation"; the GRU's is not kept on CPU (it
is under cuDNN), and nothing is reported for it. No training step in this file uses them."""
import torch
import torch.nn as nn


class BaseRNN(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.input_dim, self.hidden_dim = input_dim, hidden_dim

    def forward_cell(self, x):
        raise NotImplementedError()

    def forward(self, x, lens=None):
        o = self.forward_cell(x)
        if lens is not None:
            mask = torch.arange(x.size(1)).unsqueeze(0) < lens.unsqueeze(1)
            o.masked_fill_(~mask.unsqueeze(-1), 0)  # <- GA110
        return o


class LSTM(BaseRNN):
    def __init__(self, *args):
        super().__init__(*args)
        self.lstm = nn.LSTM(self.input_dim, self.hidden_dim, batch_first=True)

    def forward_cell(self, x):
        o, _ = self.lstm(x)
        return o


class GRU(BaseRNN):
    def __init__(self, *args):
        super().__init__(*args)
        self.gru = nn.GRU(self.input_dim, self.hidden_dim, batch_first=True)

    def forward_cell(self, x):
        o, _ = self.gru(x)
        return o
