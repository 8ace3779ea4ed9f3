/// The build identity recorded in traces and printed by `imsim --version`.
public enum IMSimVersion {
    public static let string = "0.1.0"
    #if DEBUG
    public static let buildConfiguration = "debug"
    #else
    public static let buildConfiguration = "release"
    #endif
}
