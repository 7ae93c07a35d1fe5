"""Writes reference/data/mlp_adam.safetensors: a 2-layer MLP trained 5 Adam steps in PyTorch.

The C test tests/test_reference_mlp.c rebuilds the same model in tickgrad from the stored initial
weights and inputs and must match every loss and gradient to 1e-5 relative.

Run: .venv/bin/python reference/mlp_adam.py   (needs torch and safetensors; CI does not run it)
"""
import os

import torch
from safetensors.torch import save_file

torch.manual_seed(1234)
torch.use_deterministic_algorithms(True)
N, D_IN, H, D_OUT, STEPS, LR = 8, 4, 16, 3, 5, 1e-2

x = torch.randn(N, D_IN)
y = torch.randn(N, D_OUT)
fc1 = torch.nn.Linear(D_IN, H)
fc2 = torch.nn.Linear(H, D_OUT)
params = {"fc1.weight": fc1.weight, "fc1.bias": fc1.bias, "fc2.weight": fc2.weight, "fc2.bias": fc2.bias}

out = {"x": x.clone(), "y": y.clone()}
for name, p in params.items():
    out[f"init.{name}"] = p.detach().clone()

opt = torch.optim.Adam(params.values(), lr=LR)
losses = []
for step in range(STEPS):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(fc2(torch.relu(fc1(x))), y)
    loss.backward()
    losses.append(loss.item())
    for name, p in params.items():
        out[f"step{step}.grad.{name}"] = p.grad.detach().clone()
    opt.step()
for name, p in params.items():
    out[f"final.{name}"] = p.detach().clone()
out["losses"] = torch.tensor(losses, dtype=torch.float32)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "mlp_adam.safetensors")
save_file({k: v.contiguous() for k, v in out.items()}, path,
          metadata={"torch": torch.__version__, "lr": str(LR), "steps": str(STEPS)})
print(f"wrote {path} (torch {torch.__version__}); losses {losses}")
