from xtuner.model import SupervisedFinetune

model = dict(type=SupervisedFinetune,
