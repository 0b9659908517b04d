xtuner train xtuner.py
xtuner train xtuner.clean.py
