// Replaced by the JACK host implementation.
