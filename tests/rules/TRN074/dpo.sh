trl dpo --config trl_dpo.yaml
