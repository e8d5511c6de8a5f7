# runtime: skip (the driver that calls it once per iteration is in another file)
"""The same model with its GradScaler built once, in __init__: the scale adapts over the steps."""
import torch
import torch.nn as nn


class SRModel:
    def __init__(self, opt):
        self.opt = opt
        self.net_g = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1))
        self.optimizer_g = torch.optim.AdamW(self.net_g.parameters(), lr=2e-4)
        self.cri_pix = nn.L1Loss()
        self.scaler = torch.amp.GradScaler("cuda", enabled=opt["use_amp"] is True, init_scale=2.0**5)

    def feed_data(self, data):
        self.lq, self.gt = data["lq"], data["gt"]

    def optimize_parameters(self, current_iter):
        self.optimizer_g.zero_grad(set_to_none=True)
        use_amp = self.opt["use_amp"] is True
        scaler = self.scaler
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
            self.output = self.net_g(self.lq)
            l_g_total = self.cri_pix(self.output, self.gt)
        scaler.scale(l_g_total).backward()
        scaler.step(self.optimizer_g)
        scaler.update()
