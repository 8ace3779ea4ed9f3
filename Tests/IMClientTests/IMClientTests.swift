import Testing
@testable import IMClient
