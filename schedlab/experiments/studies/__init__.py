"""Paper-specific studies: the policy factory (score tables and fits), predictor studies, the hybrid
study's reliability table, and a campaign's predictions section. Each study kind registers itself
(campaigns/kinds.py)."""
