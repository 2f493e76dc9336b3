"""optnoise: optimal noise design for differential privacy on discrete finite queries."""
__version__ = "0.1.0"
