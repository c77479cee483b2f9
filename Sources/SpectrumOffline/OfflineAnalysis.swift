public enum OfflineAnalysis {}
