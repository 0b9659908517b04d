from trl import DataCollatorForCompletionOnlyLM, SFTConfig, SFTTrainer

collator = DataCollatorForCompletionOnlyLM("### Answer:", instruction_template="### Question:", tokenizer=tokenizer)
config = SFTConfig(output_dir="out", packing=True, max_seq_length=2048)
trainer = SFTTrainer(model, args=config, train_dataset=dataset, data_collator=collator)
trainer.train()
