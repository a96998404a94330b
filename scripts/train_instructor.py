"""Train a local instructor model with GRPO on experience cases (CDI's experience-based optimisation).

Cases come from the proxy's experience log (`guardian-proxy experience export cases.jsonl`) or are built
from PrivacyLens trajectories (`--privacylens FILE`: the context cut at the final, leaking action, the
item's sensitive_info_items as what must be withheld). For every case the instructor samples a group of
guidance texts; a simulated agent then takes its next action: it copies every observed sentence except
those the guidance tells it to withhold (a guidance line that contains ≥ 50% of the sentence's content
words). The reward is the case's AD = 2·n_s/(n_s + n_u + N_s) with PP/HS counted as in scripts/eval_agents.py.
GRPO: advantages are rewards normalised within the group; loss = −A·mean log-prob of the sampled guidance
+ β·(log-prob − reference log-prob).

Real training (e.g. a Qwen3-4B instructor) needs a GPU; on a CPU this script is for smoke tests with a
tiny model (`--init-tiny DIR` writes a randomly initialised GPT-2 with a byte tokenizer there).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import privacylens as PL  # noqa: E402

from guardian_proxy.agents.items import containment, content_words  # noqa: E402


class ByteTokenizer:
    """Bytes as tokens (0..255) plus BOS/EOS: enough for a randomly initialised smoke-test model."""

    bos, eos, vocab = 256, 257, 258

    def encode(self, text: str) -> list[int]:
        return [self.bos] + list(text.encode("utf-8", "replace"))

    def decode(self, ids: list[int]) -> str:
        return bytes(i for i in ids if i < 256).decode("utf-8", "replace")


def load_model(path: Path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path)
    tok_file = path / "byte_tokenizer"
    if tok_file.exists():
        return model, ByteTokenizer()
    from transformers import AutoTokenizer

    return model, _HFTok(AutoTokenizer.from_pretrained(path))


class _HFTok:
    def __init__(self, t):
        self.t, self.eos = t, t.eos_token_id

    def encode(self, text):
        return self.t(text)["input_ids"]

    def decode(self, ids):
        return self.t.decode(ids, skip_special_tokens=True)


def init_tiny(path: Path) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=ByteTokenizer.vocab, n_positions=512, n_embd=32, n_layer=2, n_head=2,
                     bos_token_id=ByteTokenizer.bos, eos_token_id=ByteTokenizer.eos)
    GPT2LMHeadModel(cfg).save_pretrained(path)
    (path / "byte_tokenizer").write_text("bytes 0-255, 256 = BOS, 257 = EOS\n")


def cases_from_privacylens(path: Path, limit: int) -> list[dict]:
    out = []
    for item in PL.load(path, limit):
        recs = PL.records(item)
        observed = [i.text for r in recs for i in r.items]
        sens = item["trajectory"]["sensitive_info_items"]
        out.append({"instruction": item["trajectory"]["user_instruction"], "observed": observed,
                    "withheld": sens, "shareable": PL.shareable(recs, PL.non_shareable(item, recs))})
    return out


def cases_from_log(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        c = json.loads(line)
        out.append({"instruction": next((m.get("content") for m in c["context"] if isinstance(m, dict)
                                         and m.get("role") == "user" and isinstance(m.get("content"), str)), ""),
                    "observed": c["withheld"] + c["shareable"], "withheld": c["withheld"], "shareable": c["shareable"]})
    return out


def prompt(case: dict, max_items: int = 12) -> str:
    items = "\n".join(f"- {s}" for s in case["observed"][:max_items])
    return (f"Task: {case['instruction']}\nObserved:\n{items}\nWrite privacy guidance listing what to withhold.\n"
            "Do NOT include:\n")


def reward(case: dict, guidance: str) -> float:
    lines = [content_words(x) for x in guidance.splitlines() if x.strip()]

    def told(s: str) -> bool:
        w = content_words(s)
        return any(containment(w, ln) >= 0.5 for ln in lines)
    sent = [s for s in case["observed"] if not told(s)]
    words = content_words(" ".join(sent))
    n_u = sum(1 for s in case["withheld"] if containment(s, words) >= 0.5)
    n_s = sum(1 for s in case["shareable"] if containment(s, words) >= 0.5)
    N_s = len(case["shareable"])
    return 2 * n_s / (n_s + n_u + N_s) if (n_s + n_u + N_s) else 1.0


def logprob(model, ids: torch.Tensor, start: int) -> torch.Tensor:
    logits = model(ids.unsqueeze(0)).logits[0, :-1]
    lp = torch.log_softmax(logits, -1).gather(1, ids[1:].unsqueeze(1)).squeeze(1)
    return lp[start - 1:]


def train(args) -> dict:
    model, tok = load_model(args.model)
    ref, _ = load_model(args.model)
    ref.eval()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    cases = cases_from_log(args.cases) if args.cases else cases_from_privacylens(args.privacylens, args.limit)
    if not cases:
        raise SystemExit("no cases to train on")
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    max_ctx = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", 2048)
    history = []
    for step in range(args.steps):
        case = rng.choice(cases)
        p_ids = tok.encode(prompt(case))[-(max_ctx - args.max_new_tokens - 1):]
        p = torch.tensor(p_ids)
        samples, rewards = [], []
        model.eval()
        with torch.no_grad():
            for _ in range(args.group):
                out = model.generate(p.unsqueeze(0), attention_mask=torch.ones(1, len(p_ids), dtype=torch.long),
                                     do_sample=True, temperature=1.0, max_new_tokens=args.max_new_tokens,
                                     pad_token_id=tok.eos, eos_token_id=tok.eos)[0]
                samples.append(out)
                rewards.append(reward(case, tok.decode(out[len(p_ids):].tolist())))
        r = torch.tensor(rewards)
        adv = (r - r.mean()) / (r.std(unbiased=False) + 1e-6)
        model.train()
        loss = torch.zeros(())
        for ids, a in zip(samples, adv, strict=True):
            if len(ids) <= len(p_ids):
                continue
            lp = logprob(model, ids, len(p_ids))
            with torch.no_grad():
                lp_ref = logprob(ref, ids, len(p_ids))
            loss = loss + (-(a * lp).mean() + args.beta * (lp - lp_ref).mean()) / args.group
        opt.zero_grad()
        if loss.requires_grad:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        history.append({"step": step, "reward_mean": round(float(r.mean()), 4), "loss": round(float(loss.detach()), 4)})
        print(json.dumps(history[-1]), flush=True)
    if args.output:
        model.save_pretrained(args.output)
        if isinstance(tok, ByteTokenizer):
            (Path(args.output) / "byte_tokenizer").write_text("bytes 0-255, 256 = BOS, 257 = EOS\n")
    return {"steps": args.steps, "cases": len(cases), "reward_first": history[0]["reward_mean"],
            "reward_last": history[-1]["reward_mean"]}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help="causal LM directory (transformers)")
    ap.add_argument("--init-tiny", type=Path, help="write a tiny random GPT-2 + byte tokenizer here and use it")
    ap.add_argument("--cases", type=Path, help="decrypted experience cases (guardian-proxy experience export)")
    ap.add_argument("--privacylens", type=Path, default=PL.DATA)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--beta", type=float, default=0.04)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--output", type=Path)
    args = ap.parse_args(argv)
    if args.init_tiny:
        init_tiny(args.init_tiny)
        args.model = args.init_tiny
    if not args.model:
        ap.error("--model or --init-tiny is required")
    result = train(args)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
