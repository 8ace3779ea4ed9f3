import Testing
@testable import IMReplay
