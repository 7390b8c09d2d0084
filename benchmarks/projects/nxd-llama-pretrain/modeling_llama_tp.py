"""A small Llama decoder written on neuronx_distributed tensor-parallel layers."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from neuronx_distributed.parallel_layers import layers, parallel_state
from neuronx_distributed.parallel_layers.loss_functions import parallel_cross_entropy


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x * torch.rsqrt(var + self.eps)).type_as(x) * self.weight


def rotary(seq_len, dim, device, base=10000.0):
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, device=device).float() / dim))
    t = torch.arange(seq_len, device=device).float()
    freqs = torch.outer(t, inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def apply_rotary(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    rot = torch.cat([-x2, x1], dim=-1)
    return x * cos + rot * sin


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        tp = parallel_state.get_tensor_model_parallel_size()
        self.head_dim = cfg["hidden_size"] // cfg["num_attention_heads"]
        self.local_heads = cfg["num_attention_heads"] // tp
        self.qkv = layers.ColumnParallelLinear(cfg["hidden_size"], 3 * cfg["hidden_size"], bias=False,
                                               gather_output=False)
        self.o_proj = layers.RowParallelLinear(cfg["hidden_size"], cfg["hidden_size"], bias=False,
                                               input_is_parallel=True)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, s, self.local_heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.local_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.local_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out = out.transpose(1, 2).reshape(b, s, self.local_heads * self.head_dim)
        return self.o_proj(out)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate_up = layers.ColumnParallelLinear(cfg["hidden_size"], 2 * cfg["intermediate_size"], bias=False,
                                                   gather_output=False)
        self.down = layers.RowParallelLinear(cfg["intermediate_size"], cfg["hidden_size"], bias=False,
                                             input_is_parallel=True)

    def forward(self, x):
        g, u = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(g) * u)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1 = RMSNorm(cfg["hidden_size"], cfg.get("rms_norm_eps", 1e-6))
        self.attn = Attention(cfg)
        self.ln2 = RMSNorm(cfg["hidden_size"], cfg.get("rms_norm_eps", 1e-6))
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.ln1(x), cos, sin)
        return x + self.mlp(self.ln2(x))


class TinyLlama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = layers.ParallelEmbedding(cfg["vocab_size"], cfg["hidden_size"])
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg["num_hidden_layers"])])
        self.norm = RMSNorm(cfg["hidden_size"])
        self.lm_head = layers.ColumnParallelLinear(cfg["hidden_size"], cfg["vocab_size"], bias=False,
                                                   gather_output=False)

    def forward(self, input_ids, labels=None):
        x = self.embed(input_ids)
        head_dim = self.cfg["hidden_size"] // self.cfg["num_attention_heads"]
        cos, sin = rotary(input_ids.shape[1], head_dim, input_ids.device)
        for blk in self.blocks:
            x = blk(x, cos, sin)
        logits = self.lm_head(self.norm(x))
        if labels is None:
            return logits
        shift_logits = logits[:, :-1, :].contiguous()
        shift_labels = labels[:, 1:].contiguous()
        loss = parallel_cross_entropy(shift_logits, shift_labels)
        return loss.mean()


def init_weights(model, std=0.02):
    for n, p in model.named_parameters():
        if p.dim() > 1:
            nn.init.normal_(p, mean=0.0, std=std / math.sqrt(2 * model.cfg["num_hidden_layers"]) if "o_proj" in n or "down" in n else std)
