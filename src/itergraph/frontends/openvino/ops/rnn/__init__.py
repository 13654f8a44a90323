"""Recurrent cells and sequences (LSTM, GRU, RNN): both directions."""
