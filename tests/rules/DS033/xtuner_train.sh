xtuner train xtuner.py --deepspeed deepspeed_zero2_offload
xtuner train xtuner.clean.py --deepspeed deepspeed_zero2_offload
xtuner train xtuner_fixed.clean.py --deepspeed deepspeed_zero2_offload
xtuner train xtuner_bnb_module.py --deepspeed deepspeed_zero3_offload
xtuner train xtuner_no_offload.clean.py --deepspeed deepspeed_zero2
