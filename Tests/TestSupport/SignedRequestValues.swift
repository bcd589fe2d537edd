/// The station, device and time of the signed-request tests: the client's half (SigningTests)
/// and the station's (StationEmulatorTests) sign and verify the same requests.
public enum SignedRequestValues {
    /// The station's uid.
    public static let stationUID = "da27af3e-b2ac-4d02-a894-3c22d638d1ba"
    /// The signing device's uid.
    public static let deviceUID = "Kims-MacBook-Pro-990DCF48"
    /// The time the requests are signed and verified at (Unix seconds).
    public static let now: Int64 = 1_795_956_595
}
