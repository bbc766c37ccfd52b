"""Attacks a liar, a sybil or an abuser would try; each test fails without its defence."""
