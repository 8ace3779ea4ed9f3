import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

/// Issue 22 item 5. Seed rule (im-semantics §5): "iOS background: the SDK closes the connection
/// 2 minutes after the app goes to background" — iOS, not every platform.
@Suite("Platforms")
struct PlatformTests {
    @Test("the 2-minute background close is iOS's (and the generic mobile's); Android, desktop and web stay connected",
          arguments: [(Platform.ios, true), (.mobile, true), (.android, false), (.desktop, false), (.web, false)])
    func backgroundCloseOnlyOnIOS(platform: Platform, closes: Bool) {
        var h = Harness(platform: platform)
        h.connectInSync()
        h.feed(.lifecycle(.background))
        #expect((h.effects.timersSet[.backgroundClose] == .minutes(2)) == closes)
        #expect(h.effects.closes == 0)
        #expect(h.core.connectionStateName == "connected")
    }

    @Test("iOS and Android are both mobile; clientId names the platform")
    func platformClasses() throws {
        #expect(Platform.ios.isMobile && Platform.android.isMobile && Platform.mobile.isMobile)
        #expect(!Platform.desktop.isMobile && !Platform.web.isMobile)
        let c = Frame.Connect(keepAlive: 30, clientId: Frame.Connect.clientId(platform: .android, deviceId: "p2"), appKey: nil, token: nil)
        #expect(c.platformAndDevice?.platform == .android && c.platformAndDevice?.deviceId == "p2")
    }
}
