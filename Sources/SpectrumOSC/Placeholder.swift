// Replaced by the OSC publisher implementation.
