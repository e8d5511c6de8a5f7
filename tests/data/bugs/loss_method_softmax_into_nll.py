# runtime: skip (checked by hand: the loss is bounded at -1 and its gradient shrinks)
# confidence: suspicious
"""After LibCity's trajectory models: the model's forward returns softmax probabilities and its
own `calculate_loss(batch)`, which the library's executor calls in another file, feeds them to
`nn.NLLLoss`, which expects log-probabilities. The loss is then -p[target], bounded at -1, and its
gradient shrinks as the model gets confident. No training step in this file reaches it: the method
is checked on its own, so the finding is suspicious. Checked with torch 2.13 (CPU): the loss is
-0.05 on random data where log_softmax gives 3.02, with a twentieth of the gradient's norm;
valid/loss_method_log_softmax_into_nll.py returns log-probabilities."""
import torch.nn as nn
import torch.nn.functional as F


class LocPredictor(nn.Module):
    def __init__(self, config, data_feature):
        super().__init__()
        self.emb = nn.Embedding(data_feature["loc_size"], config["hidden_size"])
        self.linear = nn.Linear(config["hidden_size"], data_feature["loc_size"])
        self.loss_func = nn.NLLLoss()

    def forward(self, batch):
        out = self.emb(batch["current_loc"]).mean(1)
        return F.softmax(self.linear(out), dim=1)

    def calculate_loss(self, batch):
        prediction = self.forward(batch)
        return self.loss_func(prediction, batch["target"])  # <- GA407
