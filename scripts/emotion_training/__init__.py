"""The emotion head's training, split by job (scripts/train_emotion.py runs it and says what it trains):
labels (GoEmotions' labels onto ours and Ekman's groups), corpus (the texts, their targets and embeddings),
head (the model and its training), evaluation (Ekman macro-F1, offsets, out-of-fold predictions)."""
