-- RMTP (RongCloud's IM protocol) dissector for Wireshark / tshark (Lua 5.2+, Wireshark >= 3.6).
--
--   wireshark -X lua_script:Tools/wireshark/rmtp.lua run.pcapng
--   tshark -X lua_script:Tools/wireshark/rmtp.lua -r run.pcapng -Y rmtp -T fields -e rmtp.type -e rmtp.topic -e rmtp.msgid
--
-- Or copy it into ~/.local/lib/wireshark/plugins/. The layouts are those of
-- shared/spec/wire-protocol.md and Docs/wire-format.md (IMWire):
--   * stream framing over TCP (default port 5800, `imsim run --pcap`): byte0 · checksum ·
--     remaining length (MQTT varint, 1-4 bytes) · payload, checksum = byte0 xor every length byte,
--     optionally XOR-obfuscated with {106,79,19,35,14,41,20,121} (preference "obfuscated");
--     reassembled with Wireshark's PDU API (dissect_tcp_pdus): frames split across segments and
--     several frames per segment both work;
--   * message framing inside WebSocket (one frame per WebSocket message; the web SDK): registered
--     on the WebSocket port table for the same port, and as a WebSocket heuristic.
-- byte0 = type << 4 | dup << 3 | qos << 1 | retain. On a server->client PUBLISH the dup bit is
-- the syncMsg bit (rmtp.syncmsg): the sync echo of a message this user sent from another device.
-- Bodies of the common topics are decoded as the spec's protobuf messages (proto2 wire format).
-- A QUERYACK body is decoded with the topic of its QUERY (matched by TCP stream and msgId).
-- Fields: rmtp.type (frame name), rmtp.code, rmtp.dup, rmtp.syncmsg, rmtp.qos, rmtp.retain,
-- rmtp.checksum, rmtp.length, rmtp.topic, rmtp.target, rmtp.msgid, rmtp.date, rmtp.status,
-- rmtp.millis, rmtp.messageuid, rmtp.body_type, rmtp.classname, rmtp.content, rmtp.uid, … (see below).

local rmtp = Proto("rmtp", "RongCloud RMTP")
local rmtp_ws = Proto("rmtp_ws", "RongCloud RMTP (WebSocket message framing)")

local frame_names = {
    [1] = "CONNECT", [2] = "CONNACK", [3] = "PUBLISH", [4] = "PUBACK", [5] = "QUERY", [6] = "QUERYACK",
    [7] = "QUERYCON", [8] = "SUBSCRIBE", [9] = "SUBACK", [10] = "UNSUBSCRIBE", [11] = "UNSUBACK",
    [12] = "PINGREQ", [13] = "PINGRESP", [14] = "DISCONNECT",
}
local OBF_KEY = { 106, 79, 19, 35, 14, 41, 20, 121 }

local f = rmtp.fields
f.type = ProtoField.string("rmtp.type", "Frame")
f.code = ProtoField.uint8("rmtp.code", "Type code", base.DEC, frame_names, 0xF0)
f.dup = ProtoField.bool("rmtp.dup", "Dup", 8, nil, 0x08)
f.syncmsg = ProtoField.bool("rmtp.syncmsg", "syncMsg (sync echo of the user's own message)")
f.qos = ProtoField.uint8("rmtp.qos", "QoS", base.DEC, nil, 0x06)
f.retain = ProtoField.bool("rmtp.retain", "Retain", 8, nil, 0x01)
f.checksum = ProtoField.uint8("rmtp.checksum", "Checksum", base.HEX)
f.checksum_ok = ProtoField.bool("rmtp.checksum_ok", "Checksum good")
f.length = ProtoField.uint32("rmtp.length", "Remaining length")
f.direction = ProtoField.string("rmtp.direction", "Direction")
f.protocol_name = ProtoField.string("rmtp.protocol_name", "Protocol name")
f.protocol_version = ProtoField.uint8("rmtp.protocol_version", "Protocol version")
f.connect_flags = ProtoField.uint8("rmtp.connect_flags", "Connect flags", base.HEX)
f.keepalive = ProtoField.uint16("rmtp.keepalive", "Keep alive (s)")
f.client_id = ProtoField.string("rmtp.client_id", "Client id")
f.app_key = ProtoField.string("rmtp.app_key", "App key")
f.token = ProtoField.string("rmtp.token", "Token")
f.status = ProtoField.uint16("rmtp.status", "Status")
f.user_id = ProtoField.string("rmtp.user_id", "User id")
f.session_id = ProtoField.string("rmtp.session_id", "Session id")
f.timestamp = ProtoField.int64("rmtp.timestamp", "Timestamp (ms)")
f.date = ProtoField.uint32("rmtp.date", "Date (s)")
f.topic = ProtoField.string("rmtp.topic", "Topic")
f.target = ProtoField.string("rmtp.target", "Target id")
f.msgid = ProtoField.uint16("rmtp.msgid", "Message id")
f.millis = ProtoField.uint16("rmtp.millis", "Millis")
f.messageuid = ProtoField.string("rmtp.messageuid", "messageUId")
f.sent_time = ProtoField.string("rmtp.sent_time", "sentTime (ms)")
f.body = ProtoField.bytes("rmtp.body", "Body")
f.body_type = ProtoField.string("rmtp.body_type", "Body message")
f.pb_field = ProtoField.string("rmtp.pb", "Field")
f.classname = ProtoField.string("rmtp.classname", "objectName")
f.content = ProtoField.string("rmtp.content", "Content")
f.uid = ProtoField.string("rmtp.uid", "messageUId (body)")
f.from_user = ProtoField.string("rmtp.from_user", "fromUserId")
f.data_time = ProtoField.string("rmtp.data_time", "dataTime (ms)")
f.sync_time = ProtoField.string("rmtp.sync_time", "syncTime (ms)")
f.error = ProtoField.string("rmtp.error", "Error")

local e_checksum = ProtoExpert.new("rmtp.bad_checksum", "Bad RMTP checksum", expert.group.CHECKSUM, expert.severity.ERROR)
local e_malformed = ProtoExpert.new("rmtp.malformed", "Malformed RMTP frame", expert.group.MALFORMED, expert.severity.ERROR)
rmtp.experts = { e_checksum, e_malformed }

rmtp.prefs.port = Pref.uint("TCP port", 5800, "The server's TCP port (stream framing)")
rmtp.prefs.ws_port = Pref.uint("WebSocket port", 80, "The server's TCP port of WebSocket connections (message framing)")
rmtp.prefs.obfuscated = Pref.bool("Obfuscated", false, "Payloads are XOR-obfuscated (a connection option of the stream framing)")

-- Protobuf schemas: field number -> { name, kind [, nested message] }.
-- kind: "varint", "bool", "string", "bytes" (content JSON), "msg".
local S = {}
S.UpStreamMessage = { [1] = { "sessionId", "varint" }, [2] = { "classname", "string" }, [3] = { "content", "bytes" },
    [4] = { "pushText", "string" }, [5] = { "appData", "string" }, [6] = { "userId", "string" },
    [7] = { "delMsgTime", "varint" }, [8] = { "delMsgId", "string" }, [9] = { "configFlag", "varint" },
    [10] = { "clientUniqueId", "varint" }, [11] = { "extraContent", "string" } }
S.DownStreamMessage = { [1] = { "fromUserId", "string" }, [2] = { "type", "varint" }, [3] = { "groupId", "string" },
    [4] = { "classname", "string" }, [5] = { "content", "bytes" }, [6] = { "dataTime", "varint" },
    [7] = { "status", "varint" }, [8] = { "extra", "varint" }, [9] = { "msgId", "string" },
    [10] = { "direction", "varint" }, [14] = { "clientUniqueId", "varint" }, [15] = { "extraContent", "string" } }
S.DownStreamMessages = { [1] = { "list", "msg", "DownStreamMessage" }, [2] = { "syncTime", "varint" }, [3] = { "finished", "bool" } }
S.SyncRequestMsg = { [1] = { "syncTime", "varint" }, [2] = { "ispolling", "bool" }, [3] = { "isweb", "bool" },
    [4] = { "isPullSend", "bool" }, [5] = { "isKeeping", "bool" }, [6] = { "sendBoxSyncTime", "varint" } }
S.NotifyMsg = { [1] = { "type", "varint" }, [2] = { "time", "varint" }, [3] = { "chrmId", "string" } }
S.ChrmInput = { [1] = { "nothing", "varint" } }
S.ChrmOutput = { [1] = { "nothing", "varint" } }
S.ChrmPullMsg = { [1] = { "syncTime", "varint" }, [2] = { "count", "varint" } }
S.HistoryMsgInput = { [1] = { "targetId", "string" }, [2] = { "time", "varint" }, [3] = { "count", "varint" }, [4] = { "order", "varint" } }
S.HistoryMsgOuput = { [1] = { "list", "msg", "DownStreamMessage" }, [2] = { "syncTime", "varint" }, [3] = { "hasMsg", "varint" } }
S.ChrmKVEntity = { [1] = { "key", "string" }, [2] = { "value", "string" }, [3] = { "status", "varint" },
    [4] = { "timestamp", "varint" }, [5] = { "uid", "string" } }
S.SetChrmKV = { [1] = { "entry", "msg", "ChrmKVEntity" }, [2] = { "bNotify", "bool" }, [3] = { "notification", "msg", "UpStreamMessage" }, [4] = { "type", "varint" } }
S.DeleteChrmKV = S.SetChrmKV
S.ChrmKVOutput = { [1] = { "entries", "msg", "ChrmKVEntity" }, [2] = { "bFullUpdate", "bool" }, [3] = { "syncTime", "varint" } }
S.QueryChrmKV = { [1] = { "timestamp", "varint" } }
S.SessionMsgReadInput = { [1] = { "type", "varint" }, [2] = { "msgTime", "varint" }, [3] = { "channelId", "string" } }

local send_topics = { ppMsgP = true, ppMsgN = true, ppMsgS = true, pgMsgP = true, pgMsgS = true, chatMsg = true, chatMsgS = true, recallMsg = true }
local query_request = { pullMsg = "SyncRequestMsg", joinChrm = "ChrmInput", joinChrmR = "ChrmInput", exitChrm = "ChrmInput",
    chrmPull = "ChrmPullMsg", setKV = "SetChrmKV", delKV = "DeleteChrmKV", pullKV = "QueryChrmKV",
    qryPMsg = "HistoryMsgInput", qryGMsg = "HistoryMsgInput", qryCHMsg = "HistoryMsgInput", updRRTime = "SessionMsgReadInput" }
local query_response = { pullMsg = "DownStreamMessages", joinChrm = "ChrmOutput", joinChrmR = "ChrmOutput", exitChrm = "ChrmOutput",
    chrmPull = "DownStreamMessages", setKV = "ChrmOutput", delKV = "ChrmOutput", pullKV = "ChrmKVOutput",
    qryPMsg = "HistoryMsgOuput", qryGMsg = "HistoryMsgOuput", qryCHMsg = "HistoryMsgOuput" }

-- QUERY topics by (conversation key, msgId), to decode QUERYACK bodies.
local query_topics = {}
function rmtp.init() query_topics = {} end

-- A plain Lua byte string view: the (de-obfuscated) payload, 0-based offsets.
local function varint(s, pos)
    local v, mul = 0, 1
    for i = 0, 9 do
        local b = s:byte(pos + 1 + i)
        if not b then return nil, pos end
        v = v + (b % 128) * mul
        mul = mul * 128
        if b < 128 then return v, pos + i + 1 end
    end
    return nil, pos
end

local function num(v)
    -- varints are read as doubles: exact below 2^53 (ms timestamps, ids); show integers without ".0"
    if v == math.floor(v) and v < 2 ^ 53 then return string.format("%.0f", v) end
    return tostring(v)
end

-- Decodes protobuf message `name` from s[a, b) (0-based), adding items under `tree`. `range(a, len)`
-- gives the TvbRange of payload bytes. Returns nil or an error string.
local function decode_pb(name, s, a, b, tree, range, depth)
    local schema = S[name]
    if not schema or depth > 8 then return "no schema" end
    local pos = a
    while pos < b do
        local start = pos
        local key
        key, pos = varint(s, pos)
        if not key or pos > b then return "bad tag at body offset " .. start end
        local fno, wt = math.floor(key / 8), key % 8
        local def = schema[fno] or { "field" .. fno, wt == 2 and "bytes" or "varint" }
        if wt == 0 then
            local v
            v, pos = varint(s, pos)
            if not v or pos > b then return "bad varint at body offset " .. start end
            local shown = def[2] == "bool" and (v ~= 0 and "true" or "false") or num(v)
            tree:add(f.pb_field, range(start, pos - start), def[1] .. ": " .. shown)
            if name == "DownStreamMessage" and def[1] == "dataTime" then tree:add(f.data_time, range(start, pos - start), num(v)) end
            if (name == "DownStreamMessages" or name == "HistoryMsgOuput") and def[1] == "syncTime" then
                tree:add(f.sync_time, range(start, pos - start), num(v))
            end
        elseif wt == 2 then
            local len
            len, pos = varint(s, pos)
            if not len or pos + len > b then return "bad length at body offset " .. start end
            local vs = s:sub(pos + 1, pos + len)
            if def[2] == "msg" then
                local sub = tree:add(f.pb_field, range(start, pos + len - start), def[1] .. ": " .. def[3])
                local err = decode_pb(def[3], s, pos, pos + len, sub, range, depth + 1)
                if err then return err end
            else
                local item = tree:add(f.pb_field, range(start, pos + len - start), def[1] .. ": " .. vs)
                if def[1] == "classname" then tree:add(f.classname, range(pos, len), vs) end
                if def[1] == "content" then tree:add(f.content, range(pos, len), vs) end
                if def[1] == "fromUserId" then tree:add(f.from_user, range(pos, len), vs) end
                if name == "DownStreamMessage" and def[1] == "msgId" then tree:add(f.uid, range(pos, len), vs) end
                item:set_generated(false)
            end
            pos = pos + len
        elseif wt == 1 then
            if pos + 8 > b then return "truncated fixed64 at body offset " .. start end
            pos = pos + 8
            tree:add(f.pb_field, range(start, pos - start), def[1] .. ": (fixed64)")
        elseif wt == 5 then
            if pos + 4 > b then return "truncated fixed32 at body offset " .. start end
            pos = pos + 4
            tree:add(f.pb_field, range(start, pos - start), def[1] .. ": (fixed32)")
        else
            return "wire type " .. wt .. " at body offset " .. start
        end
    end
    return nil
end

-- Dissects one frame. `s`: the frame's header+payload as a Lua string starting at byte0 is NOT
-- assumed: `hdr` is byte0, `s` the (de-obfuscated) payload, `range(a, len)` maps payload offsets
-- to TvbRanges. `c2s`: client -> server.
local function dissect_frame(hdr, s, range, pinfo, tree, c2s, conv_key)
    local code = math.floor(hdr / 16)
    local dup = math.floor(hdr / 8) % 2 == 1
    local name = frame_names[code] or ("type " .. code)
    tree:add(f.type, name):set_generated()
    tree:add(f.direction, c2s and "c2s" or "s2c"):set_generated()
    local n = #s
    local pos = 0
    local function need(k, what)
        if pos + k > n then error({ rmtp = "truncated " .. what .. " at payload offset " .. pos }) end
    end
    local function u8() need(1, "u8"); local v = s:byte(pos + 1); pos = pos + 1; return v end
    local function u16(field, what)
        need(2, what)
        local v = s:byte(pos + 1) * 256 + s:byte(pos + 2)
        if field then tree:add(field, range(pos, 2), v) end
        pos = pos + 2
        return v
    end
    local function u32(field, what)
        need(4, what)
        local v = ((s:byte(pos + 1) * 256 + s:byte(pos + 2)) * 256 + s:byte(pos + 3)) * 256 + s:byte(pos + 4)
        if field then tree:add(field, range(pos, 4), v) end
        pos = pos + 4
        return v
    end
    local function str(field, what)
        local start = pos
        local len = u16(nil, what)
        need(len, what)
        local v = s:sub(pos + 1, pos + len)
        if field then tree:add(field, range(start, 2 + len), v) end
        pos = pos + len
        return v
    end
    local info = name
    local topic, msgid, body_type
    if code == 1 then
        str(f.protocol_name, "protocolName")
        tree:add(f.protocol_version, range(pos, 1), u8())
        local flags = u8()
        tree:add(f.connect_flags, range(pos - 1, 1), flags)
        u16(f.keepalive, "keepAlive")
        local cid = str(f.client_id, "clientId")
        if flags >= 128 then str(f.app_key, "appKey") end
        if math.floor(flags / 64) % 2 == 1 then str(f.token, "token") end
        info = info .. " " .. cid
    elseif code == 2 then
        u8()
        local status = u8()
        tree:add(f.status, range(pos - 1, 1), status)
        info = info .. " status=" .. status
        if pos < n then
            info = info .. " user=" .. str(f.user_id, "userId")
            str(f.session_id, "sessionId")
            need(8, "timestamp")
            tree:add(f.timestamp, range(pos, 8))
            pos = pos + 8
        end
    elseif code == 3 then
        if not c2s then u32(f.date, "date") end
        topic = str(f.topic, "topic")
        local target = str(f.target, "targetId")
        msgid = u16(f.msgid, "msgId")
        info = info .. " " .. topic .. " → " .. target .. " msgId=" .. msgid
        if not c2s then
            tree:add(f.syncmsg, dup):set_generated()
            if dup then info = info .. " [syncMsg]" end
        end
        if c2s or send_topics[topic] then body_type = "UpStreamMessage"
        elseif topic == "s_msg" then body_type = "DownStreamMessage"
        elseif topic == "s_ntf" or topic == "s_cmd" then body_type = "NotifyMsg" end
    elseif code == 4 then
        msgid = u16(f.msgid, "msgId")
        info = info .. " msgId=" .. msgid
        if not c2s then
            local date = u32(f.date, "date")
            local status = u16(f.status, "status")
            local millis = u16(f.millis, "millis")
            local uid = str(f.messageuid, "messageUId")
            tree:add(f.sent_time, num(date * 1000 + millis)):set_generated()
            info = info .. " uid=" .. uid .. (status ~= 0 and (" status=" .. status) or "")
        end
    elseif code == 5 then
        topic = str(f.topic, "topic")
        local target = str(f.target, "targetId")
        msgid = u16(f.msgid, "msgId")
        info = info .. " " .. topic .. " → " .. target .. " msgId=" .. msgid
        body_type = query_request[topic]
        query_topics[conv_key .. ":" .. msgid] = topic
    elseif code == 6 then
        msgid = u16(f.msgid, "msgId")
        u32(f.date, "date")
        local status = u16(f.status, "status")
        local qt = query_topics[conv_key .. ":" .. msgid]
        info = info .. " msgId=" .. msgid .. (qt and (" (" .. qt .. ")") or "") .. (status ~= 0 and (" status=" .. status) or "")
        if qt then
            body_type = query_response[qt]
            tree:add(f.topic, qt):set_generated()
        end
    elseif code == 7 then
        msgid = u16(f.msgid, "msgId")
        info = info .. " msgId=" .. msgid
    elseif code == 14 then
        u8()
        local status = u8()
        tree:add(f.status, range(pos - 1, 1), status)
        info = info .. " status=" .. status
    end
    -- Body: the rest of the frame.
    if (code == 3 or code == 5 or code == 6) and pos < n then
        local body = tree:add(f.body, range(pos, n - pos))
        if body_type then
            body:add(f.body_type, body_type):set_generated()
            local err = decode_pb(body_type, s, pos, n, body, range, 0)
            if err then
                body:add(f.error, err)
                body:add_proto_expert_info(e_malformed, body_type .. ": " .. err)
            end
        end
        pos = n
    end
    return info
end

-- Runs dissect_frame, turning truncation into an expert item instead of a Lua error.
local function safe_frame(hdr, s, range, pinfo, tree, c2s, conv_key)
    local ok, res = pcall(dissect_frame, hdr, s, range, pinfo, tree, c2s, conv_key)
    if ok then return res end
    local why = type(res) == "table" and res.rmtp or tostring(res)
    tree:add(f.error, why)
    tree:add_proto_expert_info(e_malformed, why)
    return (frame_names[math.floor(hdr / 16)] or "?") .. " [malformed: " .. why .. "]"
end

local function is_c2s(pinfo, port) return pinfo.dst_port == (port or rmtp.prefs.port) end

local function conv_key(pinfo)
    local lo, hi = pinfo.src_port, pinfo.dst_port
    if lo > hi then lo, hi = hi, lo end
    return tostring(pinfo.src) < tostring(pinfo.dst) and (tostring(pinfo.src) .. "-" .. tostring(pinfo.dst) .. ":" .. lo .. "-" .. hi)
        or (tostring(pinfo.dst) .. "-" .. tostring(pinfo.src) .. ":" .. lo .. "-" .. hi)
end

-- Stream framing: the PDU length from byte0 · checksum · varint.
local function stream_pdu_len(tvb, pinfo, offset)
    local avail = tvb:len() - offset
    local len, mul = 0, 1
    for i = 0, 3 do
        if 2 + i >= avail then return avail + 1 end  -- the length is not all here yet: one more byte
        local b = tvb(offset + 2 + i, 1):uint()
        len = len + (b % 128) * mul
        mul = mul * 128
        if b < 128 then return 2 + i + 1 + len end
    end
    return avail  -- over-long length: dissect what is here as malformed
end

local function append_info(pinfo, info)
    local cur = tostring(pinfo.cols.info)
    if cur:find("^RMTP ") then pinfo.cols.info:append(", " .. info) else pinfo.cols.info:set("RMTP " .. info) end
end

local function stream_pdu(tvb, pinfo, tree)
    pinfo.cols.protocol = "RMTP"
    local t = tree:add(rmtp, tvb())
    local hdr = tvb(0, 1):uint()
    t:add(f.code, tvb(0, 1)); t:add(f.dup, tvb(0, 1)); t:add(f.qos, tvb(0, 1)); t:add(f.retain, tvb(0, 1))
    local ck = tvb(1, 1):uint()
    local ckitem = t:add(f.checksum, tvb(1, 1))
    local expect, len, mul, i = hdr, 0, 1, 0
    while true do
        if 2 + i >= tvb:len() then
            t:add_proto_expert_info(e_malformed, "remaining length runs past the data")
            return tvb:len()
        end
        local b = tvb(2 + i, 1):uint()
        expect = bit32.bxor(expect, b)
        len = len + (b % 128) * mul
        mul = mul * 128
        i = i + 1
        if b < 128 or i == 4 then break end
    end
    t:add(f.length, tvb(2, i), len)
    local good = expect == ck
    t:add(f.checksum_ok, good):set_generated()
    if not good then ckitem:add_proto_expert_info(e_checksum, string.format("checksum 0x%02x, expected 0x%02x", ck, expect)) end
    local start = 2 + i
    local n = tvb:len() - start
    local raw = n > 0 and tvb:raw(start, n) or ""
    local s = raw
    if rmtp.prefs.obfuscated and n > 0 then
        local out = {}
        for j = 1, n do out[j] = string.char(bit32.bxor(raw:byte(j), OBF_KEY[(j - 1) % 8 + 1])) end
        s = table.concat(out)
    end
    local function range(a, l) return tvb(start + a, l) end
    local info = safe_frame(hdr, s, range, pinfo, t, is_c2s(pinfo), conv_key(pinfo))
    t:append_text(", " .. info)
    append_info(pinfo, info)
    return tvb:len()
end

function rmtp.dissector(tvb, pinfo, tree)
    dissect_tcp_pdus(tvb, tree, 2, stream_pdu_len, stream_pdu, true)
    return tvb:len()
end

-- Message framing (WebSocket): the whole message is one frame, no length, no checksum.
function rmtp_ws.dissector(tvb, pinfo, tree)
    if tvb:len() < 1 then return 0 end
    pinfo.cols.protocol = "RMTP/WS"
    local t = tree:add(rmtp, tvb())
    local hdr = tvb(0, 1):uint()
    t:add(f.code, tvb(0, 1)); t:add(f.dup, tvb(0, 1)); t:add(f.qos, tvb(0, 1)); t:add(f.retain, tvb(0, 1))
    local n = tvb:len() - 1
    local s = n > 0 and tvb:raw(1, n) or ""
    local function range(a, l) return tvb(1 + a, l) end
    local info = safe_frame(hdr, s, range, pinfo, t, is_c2s(pinfo, rmtp.prefs.ws_port), conv_key(pinfo))
    t:append_text(", " .. info)
    append_info(pinfo, info)
    return tvb:len()
end

local function ws_heuristic(tvb, pinfo, tree)
    if tvb:len() < 1 then return false end
    if pinfo.src_port ~= rmtp.prefs.ws_port and pinfo.dst_port ~= rmtp.prefs.ws_port then return false end
    local code = math.floor(tvb(0, 1):uint() / 16)
    if not frame_names[code] then return false end
    rmtp_ws.dissector(tvb, pinfo, tree)
    return true
end

local registered_port, registered_ws_port
local function register_ports()
    local tcp = DissectorTable.get("tcp.port")
    if registered_port then tcp:remove(registered_port, rmtp) end
    tcp:add(rmtp.prefs.port, rmtp)
    registered_port = rmtp.prefs.port
    local ok, ws = pcall(DissectorTable.get, "ws.port")
    if ok and ws then
        if registered_ws_port then ws:remove(registered_ws_port, rmtp_ws) end
        ws:add(rmtp.prefs.ws_port, rmtp_ws)
        registered_ws_port = rmtp.prefs.ws_port
    end
end
register_ports()
function rmtp.prefs_changed() register_ports() end
pcall(function() rmtp_ws:register_heuristic("ws", ws_heuristic) end)
