xtuner train xtuner_deepspeed.py --deepspeed deepspeed_zero2
xtuner train xtuner_deepspeed.clean.py --deepspeed deepspeed_zero2
