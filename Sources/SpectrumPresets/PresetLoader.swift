public enum PresetLoader {}
