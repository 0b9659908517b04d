"""Training data as the script prepares it: tokens, padding and labels."""

from __future__ import annotations

from linter.registry import WARNING, Rule, register


@register
class PadTokenIsEos(Rule):
    """TRN002 pad-token-is-eos

    ## What it does
    Flags a training script (read with `ast`, never run) that sets
    `tokenizer.pad_token = tokenizer.eos_token` and builds a collator that labels every pad
    token -100: transformers' `DataCollatorForLanguageModeling(..., mlm=False)` or TRL's
    `DataCollatorForCompletionOnlyLM`. Both must be visible in the script.

    ## Why is this bad?
    The collator finds padding by token id: `labels[labels == tokenizer.pad_token_id] = -100`.
    With the pad token set to EOS, every EOS in the data is masked out of the loss too, so
    the model is never taught to stop and generates until max_new_tokens after training
    (unslothai/unsloth#416, huggingface/trl#976).

    ## Example
    `train.py`:
        from transformers import DataCollatorForLanguageModeling
        from unsloth import FastLanguageModel

        model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit")
        tokenizer.pad_token = tokenizer.eos_token
        collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)
    A collator that pads labels with -100 without matching ids (`DataCollatorForSeq2Seq`,
    TRL's own SFT collator) keeps EOS in the loss; so does a pad token that is not EOS (the
    tokenizer's own, a reserved special token, or one added with `tokenizer.add_special_tokens`).
    Use instead:
        from transformers import DataCollatorForSeq2Seq
        from unsloth import FastLanguageModel

        model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit")
        tokenizer.pad_token = tokenizer.eos_token
        collator = DataCollatorForSeq2Seq(tokenizer=tokenizer)

    ## Fix safety
    No fix: which token to pad with depends on the tokenizer's vocabulary.

    ## References
    - transformers/data/data_collator.py: DataCollatorForLanguageModeling.torch_call (mlm=False)
    - trl/trainer/utils.py: DataCollatorForCompletionOnlyLM (subclass, TRL < 0.20)
    - unslothai/unsloth#416; huggingface/trl#976; issue 16 class 14
    """

    code = "TRN002"
    name = "pad-token-is-eos"
    severity = WARNING

    def check(self, run, context):
        for config in run.configs:
            pad_is_eos = config.get("tokenizer.pad_is_eos")
            collator = config.get("data.collator_masks_padding")
            if pad_is_eos is None or pad_is_eos.value is not True or collator is None:
                continue
            line = collator.span.line if collator.span is not None else "?"
            yield self.finding(
                config, pad_is_eos.span,
                f"pad_token is set to eos_token and {collator.value} (line {line}) labels every pad token -100: "
                "EOS is masked from the loss and the model never learns to stop; pad with a token that is not EOS",
            )
