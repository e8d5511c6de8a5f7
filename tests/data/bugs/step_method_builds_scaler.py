# runtime: skip (the driver that calls it once per iteration is in another file)
"""A super-resolution model in BasicSR's style: the training script calls
`model.optimize_parameters(current_iter)` once per iteration, and the method builds its GradScaler
there, so the loss scale restarts from its initial value at every step and never adapts (neosr
shipped this). The driver is not in this file: the method's `current_iter` argument and its whole
step (backward, then step) say that it runs once per iteration."""
import torch
import torch.nn as nn


class SRModel:
    def __init__(self, opt):
        self.opt = opt
        self.net_g = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1))
        self.optimizer_g = torch.optim.AdamW(self.net_g.parameters(), lr=2e-4)
        self.cri_pix = nn.L1Loss()

    def feed_data(self, data):
        self.lq, self.gt = data["lq"], data["gt"]

    def optimize_parameters(self, current_iter):
        self.optimizer_g.zero_grad(set_to_none=True)
        use_amp = self.opt["use_amp"] is True
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp, init_scale=2.0**5)  # <- GA206
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
            self.output = self.net_g(self.lq)
            l_g_total = self.cri_pix(self.output, self.gt)
        scaler.scale(l_g_total).backward()
        scaler.step(self.optimizer_g)
        scaler.update()
