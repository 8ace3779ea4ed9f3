import Testing
@testable import IMServer
