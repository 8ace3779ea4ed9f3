import Testing
@testable import IMWire
