// Replay reads captures: whoever imports IMReplay gets the capture types (IMCapture) too.
@_exported import IMCapture
