"""The transformers back end with a tiny randomly initialised Llama saved to a temp dir by the test
(its own BPE tokenizer, trained here): load, chat, guided JSON that always validates, timeout."""

import pytest

from guardian_proxy.config import LLMSettings
from guardian_proxy.errors import BackendError

pytestmark = pytest.mark.slow

TEXTS = ["We share your email address with advertising partners.", "The likelihood is 0.25 or 0.7 or 1.0.",
         "We do not sell personal information.", "user assistant system reason likelihood 0123456789 {}:,\"."] * 20
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(0)
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(TEXTS, trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "<s>", "</s>", "<unk>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<unk>")
    fast.chat_template = TEMPLATE
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
                      bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    d = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(cfg).save_pretrained(d)
    fast.save_pretrained(d)
    return d


@pytest.fixture(scope="module")
def backend(model_dir):
    from guardian_proxy.llm import make_backend

    b = make_backend(LLMSettings(backend="transformers", model_path=str(model_dir), n_threads=1))
    b.load()
    return b


def test_chat_returns_text(backend):
    out = backend.chat([{"role": "user", "content": "hello"}], max_tokens=12, timeout=60)
    assert isinstance(out, str)


def test_guided_json_always_validates(backend):
    from guardian_proxy.likelihood.slow import SCHEMA, parse_answer

    for q in ("Is sending email to ads a violation?", "We do not sell personal information."):
        answer = backend.chat_json([{"role": "user", "content": q}], SCHEMA, max_tokens=40, timeout=60)
        value, reason = parse_answer(answer)  # a random model still yields the schema's shape
        assert 0.0 <= value <= 1.0 and '"' not in reason


def test_free_json_from_a_random_model_is_a_backend_error_or_valid(backend):
    schema = {"type": "object", "properties": {"xs": {"type": "array"}}, "required": ["xs"]}
    try:
        out = backend.chat_json([{"role": "user", "content": "list"}], schema, max_tokens=10, timeout=60)
    except BackendError:
        return
    assert isinstance(out["xs"], list)


def test_timeout(backend):
    from guardian_proxy.likelihood.slow import SCHEMA

    with pytest.raises(BackendError, match="timeout"):
        backend.chat_json([{"role": "user", "content": "x"}], SCHEMA, max_tokens=40, timeout=0.0)
    with pytest.raises(BackendError, match="timeout"):
        backend.chat([{"role": "user", "content": "x"}], max_tokens=40, timeout=0.0)


def test_status_loads_it(model_dir):
    from guardian_proxy.llm import status

    st = status(LLMSettings(backend="transformers", model_path=str(model_dir)), load=True)
    assert st["ok"] and st["loaded"]
