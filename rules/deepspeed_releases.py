"""DeepSpeed releases that a config setting drives into a known bug, as one table (issue 16 recall).

Each row: the DeepSpeed settings that trigger the bug, the first release that has it and the
first that does not (both read in DeepSpeed's history: `git tag --contains` of the commit that
brought it and of the fix), what happens, and the threads. A row fires only where the pinned
DeepSpeed (an exact pin near the config, or the installed package) is in [since, fixed);
unknown -> silent. DS005 (ZeRO-2 overlap_comm) is a rule of its own.
"""

from __future__ import annotations

from .deepspeed_facts import DeepSpeedFacts
from .release_table import Range, ReleaseTable, Row, fill


def _bug(code, applies, point, what, why, since, fixed, unpinned=None) -> Row:
    """A row of DeepSpeed releases [since, fixed) (since None: every release that reads the file).
    It fires with the version unknown by default where no release has fixed it (the releases
    before `since` refuse or ignore the key); unpinned False where the releases before `since` run it."""
    return Row(code, (Range("deepspeed", since, fixed),), applies, point, what, why,
               unpinned=fixed is None if unpinned is None else unpinned)


BUGS = (
    # ZeRO++ hpZ, introduced with ZeRO++ (d18aa2c79, #3784, v0.10.0). Until #4906 (75ed63c94, v0.13.2)
    # the secondary copy was refreshed by forward/backward flags and went out of sync: runs did not
    # converge (DeepSpeed#4851, on 0.12.5). #4906 stopped passing has_been_updated to
    # _partition_param_sec (partition_parameters.py _partition), so weights written into already
    # partitioned parameters (from_pretrained under zero.Init, a resumed ZeRO checkpoint) left the
    # secondary copy stale until the first optimizer step: loss spikes at the start (DeepSpeed#7606,
    # on 0.16.9); fixed by #7707 (c069ceb30, v0.18.3).
    _bug("DS020", lambda d: d.hpz(), "parallel.hpz_partition_size",
        "zero_hpz_partition_size {parallel.hpz_partition_size} under ZeRO-3",
        "hpZ's secondary weight copy goes out of sync with the weights and the run does not converge "
        "(DeepSpeed#4851; fixed in 0.13.2, #4906); set zero_hpz_partition_size to 1 or upgrade DeepSpeed", "0.10.0", "0.13.2"),
    _bug("DS020", lambda d: d.hpz(), "parallel.hpz_partition_size",
        "zero_hpz_partition_size {parallel.hpz_partition_size} under ZeRO-3",
        "the secondary weight copy is not refreshed when pretrained weights or a resumed checkpoint are loaded "
        "into the partitioned model, so the first steps gather stale weights (loss spikes, DeepSpeed#7606; fixed "
        "in 0.18.3, #7707); set zero_hpz_partition_size to 1 or upgrade DeepSpeed", "0.13.2", "0.18.3"),
    # data_types.grad_accum_dtype arrived in v0.7.6 (runtime/config.py), defaulting to fp32 for a
    # bf16 model; engine.py _do_optimizer_sanity_check raised "Model data type and gradient
    # accumulation data type must be equal to use ZeRO" for any ZeRO stage. #2566 (06938835e,
    # v0.7.7) made the default the model dtype under ZeRO.
    _bug("DS021", lambda d: d.bf16() and d.stage() >= 1 and d("precision.grad_accum_dtype") is None,
        "parallel.zero_stage", "bf16 with ZeRO stage {stage} and no data_types.grad_accum_dtype",
        "DeepSpeed 0.7.6 accumulates bf16 gradients in fp32 by default and then refuses ZeRO at "
        "deepspeed.initialize (\"Model data type and gradient accumulation data type must be equal to use "
        "ZeRO\"; fixed in 0.7.7, #2566); write data_types.grad_accum_dtype bf16 or upgrade DeepSpeed", "0.7.6", "0.7.7"),
    # An explicit fp32 grad_accum_dtype with a bf16 model: refused under every ZeRO stage until the
    # BF16 optimizer took ZeRO-1 (#2706, 8d87c89e4, v0.8.1), and under stages 2 and 3 until #2847
    # (8afcda2ac, v0.10.1) removed the check.
    _bug("DS021", lambda d: d.bf16() and d.stage() >= 1 and d.fp32_accumulation(), "precision.grad_accum_dtype",
        "bf16 with data_types.grad_accum_dtype fp32 under ZeRO stage {stage}",
        "deepspeed.initialize refuses it (\"Model data type and gradient accumulation data type must be equal "
        "to use ZeRO\"; ZeRO-1 accepted from 0.8.1, #2706); drop grad_accum_dtype or upgrade DeepSpeed", "0.7.6", "0.8.1"),
    _bug("DS021", lambda d: d.bf16() and d.stage() >= 2 and d.fp32_accumulation(), "precision.grad_accum_dtype",
        "bf16 with data_types.grad_accum_dtype fp32 under ZeRO stage {stage}",
        "deepspeed.initialize refuses it (\"Model data type and gradient accumulation data type must be equal "
        "to use ZeRO\"; stages 2 and 3 accepted from 0.10.1, #2847); drop grad_accum_dtype or upgrade DeepSpeed", "0.8.1", "0.10.1"),
    # engine.py communication_data_type from #1487 (d14baad94, v0.5.8): unwritten, it returned float16
    # whenever `self.fp16_enabled() or self.zero_optimization_stage()`, so a bf16 ZeRO run reduced its
    # gradients in fp16 (stage_1_and_2.py / stage3.py cast to it before reducing). #2970 (261d63708,
    # v0.9.0) "Make fp32 default communication data type" (DeepSpeed#2911).
    _bug("DS022", lambda d: d.bf16() and d.stage() >= 1 and d("parallel.communication_data_type") is None
        and d.world != 1, "parallel.zero_stage",
        "bf16 under ZeRO stage {stage} with no communication_data_type",
        "DeepSpeed reduces the gradients across GPUs in fp16, whose range is far smaller than bf16's: large "
        "gradients overflow to inf/NaN and small ones lose precision (DeepSpeed#2071, #2911; fixed in 0.9.0, "
        "#2970); write \"communication_data_type\": \"bfp16\" (DeepSpeed's spelling) or upgrade DeepSpeed",
        "0.5.8", "0.9.0"),
    # engine.py _do_optimizer_sanity_check picks BF16_Optimizer for a bf16 model with fp32
    # grad_accum_dtype at ZeRO stage 1 without CPU offload. #7665 (53e91a098, v0.18.3) moved its
    # update_hp_grads into backward_epilogue, which _backward_epilogue ran after allreduce_gradients:
    # the last micro-batch of each accumulation window stayed out of the cross-rank average unless
    # bf16.immediate_grad_update (default false). Fixed by #7985 (5999fb069, v0.19.0).
    _bug("DS022", lambda d: d.bf16() and d.stage() == 1 and d.fp32_accumulation() and d.accumulates()
        and d("parallel.offload_optimizer") is not True and d("precision.bf16_immediate_grad_update") is not True
        and d.world != 1, "precision.grad_accum_dtype",
        "bf16 with data_types.grad_accum_dtype fp32 under ZeRO-1 and gradient accumulation",
        "DeepSpeed's BF16 optimizer adds the last micro-batch of each accumulation window to its fp32 "
        "gradients after they are averaged across GPUs, so that micro-batch counts only on the GPU that "
        "computed it and the GPUs step on different gradients (DeepSpeed#7985; fixed in 0.19.0); set "
        "bf16.immediate_grad_update true or upgrade", "0.18.3", "0.19.0"),
    # stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu (CPU optimizer offload with gradient
    # accumulation): c85c8703b (#6550, v0.15.2) copied the reduced gradient into the CPU buffer only
    # when micro_step_id == 0 and added later micro-batches into a buffer that set_norm_for_param_grad
    # then no longer saw, so the norm (clipping, overflow check, logged grad_norm) is that of the first
    # micro-batch only. Fixed by 9d632f103 (#7967, v0.19.0, "copy on every micro-step").
    _bug("DS030", lambda d: d.stage() in (1, 2) and d("parallel.offload_optimizer") is True
        and d("parallel.offload_optimizer_device") in (None, "cpu") and d.accumulates(), "parallel.offload_optimizer",
        "offload_optimizer cpu under ZeRO stage {stage} with gradient accumulation",
        "DeepSpeed computes the gradient norm from the first micro-batch of each accumulation window only, so "
        "gradient clipping and the logged grad_norm act on a far smaller norm than the real one and the run trains "
        "differently from the same config without offload, with no error (DeepSpeed#6550 comments, #7967; broken "
        "by #6550 in 0.15.2, fixed in 0.19.0); upgrade DeepSpeed or drop the optimizer offload", "0.15.2", "0.19.0"),
    # ZeRO++ qwZ (d18aa2c79, #3784, v0.10.0) and quantized frozen weights (7711bdbbd, #3954, v0.10.2):
    # partition_parameters.py Init uses CUDAQuantizer for both; its quantize kernel reads the tensor
    # through a __half* (csrc/quantization/pt_binding.cpp) and dequantize<__half> returns fp16, which
    # the gather paths write back into param.data. A bf16 model is read bit-wise as fp16 and comes
    # back fp16 (DeepSpeed#7775). 6098f799e (#8215, 2026-08-19) keeps the dtype; no release has it
    # yet (v0.19.5 is the newest tag), so `fixed` is None.
    _bug("DS028", lambda d: d.bf16() and d.stage() == 3 and d("parallel.zero_quantized_weights") is True,
        "parallel.zero_quantized_weights", "zero_quantized_weights with bf16 under ZeRO-3",
        "DeepSpeed's weight quantizer reads the bf16 weights as fp16 bits and gathers them back as fp16, so the "
        "forward pass gets wrong fp16 weights beside bf16 activations and fails (DeepSpeed#7775; fixed by #8215, "
        "in no release yet); drop zero_quantized_weights or train in fp16", "0.10.0", None),
    _bug("DS028", lambda d: d.bf16() and d.stage() == 3 and d("parallel.zero_quantized_nontrainable_weights") is True,
        "parallel.zero_quantized_nontrainable_weights", "zero_quantized_nontrainable_weights with bf16 under ZeRO-3",
        "DeepSpeed's weight quantizer reads the frozen bf16 weights as fp16 bits and gathers them back as fp16, "
        "so the forward pass gets wrong fp16 weights beside bf16 activations (DeepSpeed#7775; fixed by #8215, in "
        "no release yet); drop zero_quantized_nontrainable_weights or train in fp16", "0.10.2", None),
    # --- DS025: checks of the config reader (runtime/config.py DeepSpeedConfig._do_error_check and
    # its constructor) and of the engine (runtime/engine.py) that the file alone decides.
    # bf16 without ZeRO. 0.6.0 (bf16 read as `bf16` or `bfloat16`) asserts in DeepSpeedConfig
    # "bfloat16 mode is only enabled for Zero 1,2,3 currently" for any engine; 56c522386 (#1801,
    # v0.6.2) moves the refusal into DeepSpeedEngine._configure_distributed_model, where only a
    # PipelineEngine passes (NotImplementedError); ee39187d8 (#2470, v0.7.5) gives bf16 without
    # ZeRO the BF16 optimizer. (0.5.5-0.5.10 read only `bfloat16` and took bf16 with ZeRO-2 alone:
    # not modelled, the spelling is not recorded.)
    _bug("DS025", lambda d: d.bf16() and d.stage() == 0, "precision.bf16", "bf16 with ZeRO stage 0",
        "DeepSpeed's config reader refuses it (\"bfloat16 mode is only enabled for Zero 1,2,3 currently. got 0\"; "
        "accepted from 0.7.5, #2470); use ZeRO stage 1-3 or upgrade DeepSpeed", "0.6.0", "0.6.2"),
    _bug("DS025", lambda d: d.bf16() and d.stage() == 0 and d.hf_filled(), "precision.bf16", "bf16 with ZeRO stage 0",
        "deepspeed.initialize stops after the model has loaded (NotImplementedError \"When not running ZeRO, BF16 "
        "training support is only supported for Pipeline parallelism\"; accepted from 0.7.5, #2470); use ZeRO "
        "stage 1-3 or upgrade DeepSpeed", "0.6.2", "0.7.5"),
    # fp16.fp16_master_weights_and_grads: _do_error_check asserts ZeRO stage 2 from 0.5.0; 0.18.3
    # accepts stages 1, 2 and 3 ("Fp16_master_weights_and_grads is only supported with ZeRO Stage 1, 2,
    # or 3."). The releases before 0.5.0 do not read the key, so an unknown version stays silent.
    _bug("DS025", lambda d: d.fp16() and d("precision.fp16_master_weights") is True and d.stage() in (1, 3),
        "precision.fp16_master_weights", "fp16_master_weights_and_grads under ZeRO stage {stage}",
        "DeepSpeed's config reader refuses it (\"Fp16_master_weights_and_grads is only supported with ZeRO Stage 2 "
        "for now.\"; stages 1 and 3 accepted from 0.18.3); use ZeRO-2 or upgrade DeepSpeed", "0.5.0", "0.18.3"),
    _bug("DS025", lambda d: d.fp16() and d("precision.fp16_master_weights") is True and d.stage() == 0,
        "precision.fp16_master_weights", "fp16_master_weights_and_grads without ZeRO",
        "DeepSpeed's config reader refuses it (\"Fp16_master_weights_and_grads is only supported with ZeRO Stage 2 "
        "for now.\"; stages 1-3 from 0.18.3); use ZeRO or drop fp16_master_weights_and_grads", "0.5.0", None,
        unpinned=False),
    # bf16.bf16_master_weights_and_grads / bf16_optimizer_states (v0.18.3, DeepSpeedBF16Config; the
    # pydantic bf16 config of the releases just before refuses them as extra keys, older ones ignore
    # them: unknown stays silent). _do_error_check asserts ZeRO stage 1-3 for both, and the master
    # weights for the optimizer states.
    _bug("DS025", lambda d: d("precision.bf16_master_weights") is True and d.stage() == 0,
        "precision.bf16_master_weights", "bf16_master_weights_and_grads without ZeRO",
        "DeepSpeed's config reader refuses it (\"Bf16_master_weights_and_grads is only supported with ZeRO Stage 1, "
        "2, or 3.\"); use ZeRO stage 1-3", "0.18.3", None, unpinned=False),
    _bug("DS025", lambda d: d("precision.bf16_optimizer_states") is True and (
        d.stage() == 0 or d("precision.bf16_master_weights") is not True), "precision.bf16_optimizer_states",
        "bf16_optimizer_states without ZeRO or bf16_master_weights_and_grads",
        "DeepSpeed's config reader refuses it (\"bf16_optimizer_states is only supported with ZeRO Stage 1, 2, or "
        "3.\" / \"bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled.\"); use ZeRO stage "
        "1-3 with bf16_master_weights_and_grads", "0.18.3", None, unpinned=False),
    # AutoTP training (tensor_parallel.autotp_size, v0.16.4): DeepSpeedEngine.__init__ calls
    # _configure_tensor_parallel_states (_configure_tensor_parallel from 0.19.2) when autotp_size > 1,
    # which asserts ZeRO stage <= 2; d3265209f (#8167) and #8168 (v0.19.4) bring AutoTP with ZeRO-3.
    _bug("DS025", lambda d: d.autotp() > 1 and d.stage() == 3, "parallel.autotp_size",
        "tensor_parallel.autotp_size {autotp} with ZeRO stage 3",
        "deepspeed.initialize stops after the model has loaded (AssertionError \"Currently, the compatibility "
        "between 'autotp' and 'zero_stage = 3' has not been validated\"; accepted from 0.19.4, #8167); use ZeRO "
        "stage 1 or 2 or upgrade DeepSpeed", "0.16.4", "0.19.4"),
    # engine.py _configure_basic_optimizer, building the config's optimizer (every release, v0.1.0 on).
    _bug("DS025", lambda d: d.optimizer() != "" and d("optimizer.param_max_grad_norm") is not None,
        "optimizer.param_max_grad_norm", "optimizer.params.max_grad_norm",
        "DeepSpeed refuses it when it builds the optimizer (\"'max_grad_norm' is not supported as an optimizer "
        "parameter, please switch to using the deepspeed parameter 'gradient_clipping'\"); move the value to "
        "gradient_clipping", None, None),
    # engine.py _do_sanity_check (every release): Lamb needs dynamic loss scaling (fp16.loss_scale 0).
    _bug("DS025", lambda d: d.optimizer() == "lamb" and d.static_fp16_scale(), "loss_scale.loss_scale",
        "optimizer Lamb with a static fp16 loss_scale",
        "deepspeed.initialize refuses it (\"DeepSpeed lamb optimizer requires dynamic loss scaling\"); set "
        "fp16.loss_scale to 0 (dynamic)", None, None),
    # 1-bit Lamb (v0.4.1 with the checks): the same loss-scale check, and no ZeRO; 1-bit Adam: no ZeRO.
    # The assert is from v0.4.1 (1ba3e8e33, #1169); before it _configure_optimizer's untested-optimizer
    # check refused OnebitAdam (never in ZERO_SUPPORTED_OPTIMIZERS) unless zero_allow_untested_optimizer,
    # and releases that do not know a name refuse it ("is not a supported DeepSpeed Optimizer", v0.1.0
    # on): without that key every release refuses; with it, 0.4.1 on.
    _bug("DS025", lambda d: d.optimizer() == "onebitlamb" and d.static_fp16_scale(), "loss_scale.loss_scale",
        "optimizer OneBitLamb with a static fp16 loss_scale",
        "deepspeed.initialize refuses it (\"DeepSpeed onebitlamb optimizer requires dynamic loss scaling\"); set "
        "fp16.loss_scale to 0 (dynamic)", "0.4.1", None, unpinned=False),
    _bug("DS025", lambda d: d.optimizer() in ("onebitadam", "onebitlamb") and d.stage() >= 1
        and not d.untested_allowed(), "parallel.zero_stage", "optimizer {optimizer.name} under ZeRO stage {stage}",
        "deepspeed.initialize refuses it (\"1bit-Adam is not compatible with ZeRO\" / \"1bit-Lamb is not compatible "
        "with ZeRO\"; before 0.4.1 \"You are using an untested ZeRO Optimizer\"): the 1-bit optimizers compress "
        "the gradients themselves and run without ZeRO; set zero_optimization.stage 0 or use Adam", None, None),
    _bug("DS025", lambda d: d.optimizer() in ("onebitadam", "onebitlamb") and d.stage() >= 1, "parallel.zero_stage",
        "optimizer {optimizer.name} under ZeRO stage {stage}",
        "deepspeed.initialize refuses it (\"1bit-Adam is not compatible with ZeRO\" / \"1bit-Lamb is not "
        "compatible with ZeRO\"): the 1-bit optimizers run without ZeRO; set zero_optimization.stage 0 or use "
        "Adam", "0.4.1", None, unpinned=False),
    # 0/1 Adam (ZeroOneAdam) came in v0.6.1 with the check; older releases refuse the unknown name
    # ("... is not a supported DeepSpeed Optimizer"), so every release refuses it under ZeRO.
    _bug("DS025", lambda d: d.optimizer() == "zerooneadam" and d.stage() >= 1, "parallel.zero_stage",
        "optimizer {optimizer.name} under ZeRO stage {stage}",
        "deepspeed.initialize refuses it (\"0/1 Adam is not compatible with ZeRO\"; releases before 0.6.1 do "
        "not know the optimizer); set zero_optimization.stage 0 or use Adam", "0.6.1", None),
    # engine.py _do_sanity_check (v0.1.0 on): without a client optimizer the type must be a DeepSpeed
    # optimizer or a torch.optim attribute ("{} is not a supported DeepSpeed Optimizer"); a Trainer
    # `optim` name (adamw_torch, paged_adamw_8bit, sgd) is neither in any release.
    _bug("DS025", lambda d: d.trainer_optimizer_name(), "optimizer.name",
        "optimizer.type {optimizer.name} (a Trainer `optim` name)",
        "DeepSpeed has no such optimizer and torch.optim no such class, so deepspeed.initialize refuses it (\"... is "
        "not a supported DeepSpeed Optimizer\"); drop the optimizer block to let the trainer build its `optim`, or "
        "name Adam, AdamW, Lamb, Lion or a torch.optim class", None, None),
    # engine.py _configure_optimizer / _do_optimizer_sanity_check (v0.1.0 on): under ZeRO an optimizer
    # whose class is not in zero/utils.py ZERO_SUPPORTED_OPTIMIZERS needs zero_allow_untested_optimizer.
    # Lamb (FusedLamb), MuAdam/MuAdamW/MuSGD and torch classes other than Adam/AdamW/Adagrad were never
    # listed; Adagrad (torch.optim.Adagrad, DeepSpeedCPUAdagrad) was listed by d3550dc88 (#3401, v0.9.2).
    # (A trainer that builds its own optimizer, no optimizer block, sets the key itself: transformers
    # deepspeed_optim_sched, accelerate _prepare_deepspeed.)
    _bug("DS025", lambda d: d.untested_optimizer() and d.stage() >= 1 and not d.untested_allowed(),
        "optimizer.name", "optimizer {optimizer.name} under ZeRO stage {stage} without zero_allow_untested_optimizer",
        "deepspeed.initialize refuses it after the model has loaded (\"You are using an untested ZeRO Optimizer. "
        "Please add <\"zero_allow_untested_optimizer\": true> in the configuration file to use it.\"); add that key "
        "or use Adam/AdamW", None, None),
    _bug("DS025", lambda d: d.optimizer() == "adagrad" and d.stage() >= 1 and not d.untested_allowed(),
        "optimizer.name", "optimizer {optimizer.name} under ZeRO stage {stage} without zero_allow_untested_optimizer",
        "deepspeed.initialize refuses it (\"You are using an untested ZeRO Optimizer\"; ZeRO takes Adagrad from "
        "0.9.2, #3401); add \"zero_allow_untested_optimizer\": true or upgrade DeepSpeed", None, "0.9.2"),
    # Muon (66ad27804 #7509, v0.17.6; older releases do not know the name). _configure_basic_optimizer
    # asserts ZeRO stage <= 2 until 956ec6fb1 (#7919, v0.18.9) brings ZeRO-3 Muon, whose stage3.py
    # raises "Muon and reduce scatter cannot be used together" (reduce_scatter defaults true): every
    # release refuses Muon with ZeRO-3 and reduce_scatter. ZeRO finds MuonWithAuxAdam in
    # ZERO_SUPPORTED_OPTIMIZERS only from 3bc882faa (#7802, v0.18.5, "Fix Muon optimizer module path").
    # stage_1_and_2.py refuses Muon with reduce_scatter and optimizer offload from de1846cf6 (#8141, v0.19.3).
    _bug("DS025", lambda d: d.muon() and d.stage() == 3 and d.reduce_scatter(), "parallel.reduce_scatter parallel.zero_stage",
        "optimizer Muon under ZeRO-3 with reduce_scatter (the default)",
        "deepspeed.initialize refuses it after the model has loaded (ValueError \"Muon and reduce scatter cannot be used "
        "together\"; before 0.18.9 \"Muon optimizer is not yet compatible with ZeRO Stage 3\"); set "
        "zero_optimization.reduce_scatter false on DeepSpeed 0.18.9 or later, or use ZeRO stage 1 or 2", "0.17.6", None),
    _bug("DS025", lambda d: d.muon() and d.stage() == 3, "parallel.zero_stage", "optimizer Muon under ZeRO-3",
        "deepspeed.initialize refuses it (\"Muon optimizer is not yet compatible with ZeRO Stage 3\"; accepted from "
        "0.18.9, #7919); use ZeRO stage 1 or 2 or upgrade DeepSpeed", "0.17.6", "0.18.9"),
    _bug("DS025", lambda d: d.muon() and d.stage() >= 1 and not d.untested_allowed(), "optimizer.name",
        "optimizer Muon under ZeRO stage {stage} without zero_allow_untested_optimizer",
        "deepspeed.initialize refuses it after the model has loaded (\"You are using an untested ZeRO Optimizer\": "
        "ZeRO looked Muon up under a wrong module path until 0.18.5, #7802); add \"zero_allow_untested_optimizer\": "
        "true or upgrade DeepSpeed", "0.17.6", "0.18.5"),
    _bug("DS025", lambda d: d.muon() and d.stage() in (1, 2) and d.reduce_scatter() and d.offloads_optimizer(),
        "parallel.offload_optimizer", "optimizer Muon with reduce_scatter (the default) and offload_optimizer under "
        "ZeRO stage {stage}", "deepspeed.initialize refuses it after the model has loaded (ValueError \"Muon with reduce "
        "scatter does not support optimizer offload\", from 0.19.3, #8141); set zero_optimization.reduce_scatter false "
        "or drop the optimizer offload", "0.19.3", None, unpinned=False),
    # runtime/config.py get_communication_data_type (d14baad94 #1487, v0.5.8; the releases before do not
    # read the key): fp32, fp16 and "bfp16" until ed8aed570 (#5297, v0.14.1) renamed it "bf16"; any other
    # value raises ValueError "Invalid communication_data_type" when the config is read.
    _bug("DS025", lambda d: d.comm_dtype() == "bf16", "parallel.communication_data_type", "communication_data_type bf16",
        "DeepSpeed's config reader refuses it (ValueError \"Invalid communication_data_type. Supported data types: "
        "['fp16', 'bfp16', 'fp32']\"; \"bf16\" is accepted from 0.14.1, #5297); write \"bfp16\" or upgrade DeepSpeed",
        "0.5.8", "0.14.1"),
    _bug("DS025", lambda d: d.comm_dtype() == "bfp16", "parallel.communication_data_type", "communication_data_type bfp16",
        "DeepSpeed's config reader refuses it (ValueError \"Invalid communication_data_type. Supported data types: "
        "['fp16', 'bf16', 'fp32']\": 0.14.1 renamed \"bfp16\" to \"bf16\", #5297); write \"bf16\"", "0.14.1", None,
        unpinned=False),
    _bug("DS025", lambda d: d.comm_dtype() not in ("", "fp32", "fp16", "bf16", "bfp16"), "parallel.communication_data_type",
        "communication_data_type {parallel.communication_data_type}",
        "DeepSpeed's config reader refuses it (ValueError \"Invalid communication_data_type\": it takes fp32, fp16 and "
        "bf16, spelled bfp16 before 0.14.1); write one of those", "0.5.8", None),
    # engine.py _do_optimizer_sanity_check with data_types.grad_accum_dtype (21c280296, #2512, v0.7.6; the
    # releases before ignore the key): an fp16 model accumulating in fp32 or bf16 is refused under ZeRO
    # until 8afcda2ac (#2847, v0.10.1) ("must be equal to use ZeRO"), and without ZeRO or amp by every
    # release from 0.7.6 ("unsupported mix of model dtype and gradient accumulation type").
    _bug("DS025", lambda d: d.fp16() and d.stage() >= 1 and d.non_fp16_accumulation(), "precision.grad_accum_dtype",
        "fp16 with data_types.grad_accum_dtype {precision.grad_accum_dtype} under ZeRO stage {stage}",
        "deepspeed.initialize refuses it (\"Model data type and gradient accumulation data type must be equal to use "
        "ZeRO\"; accepted from 0.10.1, #2847); drop grad_accum_dtype or upgrade DeepSpeed", "0.7.6", "0.10.1"),
    _bug("DS025", lambda d: d.fp16() and d.stage() == 0 and d("precision.amp") is not True
        and d.non_fp16_accumulation(), "precision.grad_accum_dtype",
        "fp16 with data_types.grad_accum_dtype {precision.grad_accum_dtype} without ZeRO",
        "deepspeed.initialize refuses it (NotImplementedError \"unsupported mix of model dtype and gradient "
        "accumulation type\"); drop grad_accum_dtype or use ZeRO", "0.7.6", None, unpinned=False),
    # engine.py _configure_zero_optimizer raises for zero_optimization.legacy_stage1 (the key from v0.4.0,
    # cfa63f5da) from 1d295ff5f (v0.5.9) on; 0.4.0-0.5.8 run the deprecated ZeRO-1, so unknown is silent.
    _bug("DS025", lambda d: d("parallel.zero_legacy_stage1") is True and d.stage() >= 1 and d.has_optimizer(),
        "parallel.zero_legacy_stage1", "zero_optimization.legacy_stage1 under ZeRO stage {stage}",
        "deepspeed.initialize stops after the model has loaded (\"The deprecated version of ZeRO Stage 1 is not "
        "supported in deepspeed >= 0.5.9\"); drop legacy_stage1", "0.5.9", None, unpinned=False),
    # engine.py _configure_lr_scheduler -> _scheduler_from_config(self.optimizer) (v0.1.0 on): a type that
    # runtime/lr_schedules.py lacks is looked up in torch.optim.lr_scheduler (assert "DeepSpeed does not
    # recognize LR scheduler" when that lacks it too) and built on self.optimizer, which under ZeRO or
    # fp16 is DeepSpeed's wrapper, no torch.optim.Optimizer: torch's LRScheduler.__init__ raises
    # TypeError "<wrapper> is not an Optimizer" (DeepSpeed#6992, #3492). A script passing its own
    # lr_scheduler makes DeepSpeed ignore the block; one seen doing so silences these rows.
    _bug("DS025", lambda d: d.schedule() == "torch" and d.wrapper() != "", "scheduler.type",
        "scheduler.type {scheduler.type} (a torch.optim.lr_scheduler class) with the {wrapper} optimizer",
        "DeepSpeed builds the torch scheduler on its own optimizer wrapper, which is not a torch.optim.Optimizer, "
        "so deepspeed.initialize fails after the model has loaded (TypeError \"... is not an Optimizer\", "
        "DeepSpeed#6992); use a DeepSpeed schedule (WarmupLR, WarmupDecayLR, WarmupCosineLR, OneCycle) or drop the "
        "block and let the trainer build the schedule", None, None),
    _bug("DS025", lambda d: d.schedule() == "unknown", "scheduler.type", "scheduler.type {scheduler.type}",
        "DeepSpeed has no such schedule and torch.optim.lr_scheduler no such class (the lookup is case-sensitive), so "
        "deepspeed.initialize fails (\"DeepSpeed does not recognize LR scheduler\"); use LRRangeTest, OneCycle, "
        "WarmupLR, WarmupDecayLR or WarmupCosineLR as spelled", None, None),
    _bug("DS025", lambda d: d.schedule() == "deepspeed" and d("scheduler.type") == "WarmupCosineLR", "scheduler.type",
        "scheduler.type WarmupCosineLR",
        "DeepSpeed has WarmupCosineLR from 0.12.3 (#4563) only, so deepspeed.initialize fails (\"DeepSpeed does not "
        "recognize LR scheduler WarmupCosineLR\"); use WarmupDecayLR or upgrade DeepSpeed", None, "0.12.3"),
)


class DeepSpeedReleaseBug(ReleaseTable):
    """Base of the DS020-DS022, DS025, DS028 and DS030 rules: the rows of BUGS with the rule's code,
    one finding a config (the first row that holds)."""

    rows = BUGS
    facts = DeepSpeedFacts
    once = True

    def reads(self, config) -> bool:
        return config.value("file.kind") == "deepspeed"

    def message(self, row, facts, pins) -> str:
        version, where = pins[0]
        return f"{fill(row.what, facts)} on DeepSpeed {version} ({where}): {row.failure}"

    def unpinned_message(self, row, facts) -> str:
        since = row.ranges[0].first
        releases = f"from {since}" if since else "that reads the file"
        return f"{fill(row.what, facts)} (every DeepSpeed release {releases}): {row.failure}"
