trl dpo --config trl_dpo.clean.yaml
