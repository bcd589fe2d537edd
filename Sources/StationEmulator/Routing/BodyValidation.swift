import Foundation
import Manifest
import OrderedJSON

/// The JSON body models of the station's routes, validated the way FastAPI and pydantic do:
/// a 422 with a list-form `detail` naming each bad field.
struct BodyModel {
    enum Kind {
        case string
        case stringList
        case objectList
    }

    struct Field {
        var name: String
        var kind: Kind
        var isRequired: Bool

        static func required(_ name: String) -> Field { Field(name: name, kind: .string, isRequired: true) }
        static func optional(_ name: String, _ kind: Kind = .string) -> Field { Field(name: name, kind: kind, isRequired: false) }
    }

    /// Pydantic's error items, as a throwable list.
    struct Errors: Error {
        var items: [JSONValue]
    }

    var fields: [Field]

    /// The parsed body object, or the list of pydantic-style errors.
    func validate(_ body: Data) -> Result<JSONObject, Errors> {
        if body.isEmpty {
            return .failure(Errors(items: [Self.error("missing", loc: ["body"], "Field required", input: .null)]))
        }
        let value: JSONValue
        do {
            value = try WireJSON.parse(body)
        } catch {
            return .failure(Errors(items: [Self.error("json_invalid", loc: ["body", JSONOut.int(0)], "JSON decode error", input: .object([:]),
                                        context: ["error": "Expecting value"])]))
        }
        guard case let .object(object) = value else {
            return .failure(Errors(items: [Self.error("model_attributes_type", loc: ["body"],
                                        "Input should be a valid dictionary or object to extract fields from", input: value)]))
        }
        var errors: [JSONValue] = []
        for field in fields {
            let location: [JSONValue] = ["body", .string(field.name)]
            guard let fieldValue = object[field.name] else {
                if field.isRequired { errors.append(Self.error("missing", loc: location, "Field required", input: value)) }
                continue
            }
            if fieldValue.isNull, !field.isRequired { continue }
            switch field.kind {
            case .string:
                if fieldValue.stringValue == nil {
                    errors.append(Self.error("string_type", loc: location, "Input should be a valid string", input: fieldValue))
                }
            case .stringList, .objectList:
                guard let items = fieldValue.arrayValue else {
                    errors.append(Self.error("list_type", loc: location, "Input should be a valid list", input: fieldValue))
                    continue
                }
                for (index, item) in items.enumerated() {
                    if field.kind == .stringList, item.stringValue == nil {
                        errors.append(Self.error("string_type", loc: location + [JSONOut.int(index)],
                                                 "Input should be a valid string", input: item))
                    } else if field.kind == .objectList, item.objectValue == nil {
                        errors.append(Self.error("dict_type", loc: location + [JSONOut.int(index)],
                                                 "Input should be a valid dictionary", input: item))
                    }
                }
            }
        }
        return errors.isEmpty ? .success(object) : .failure(Errors(items: errors))
    }

    /// One pydantic error item: `{"type","loc","msg","input"[,"ctx"]}`.
    static func error(_ type: String, loc: [JSONValue], _ message: String, input: JSONValue,
                      context: JSONObject? = nil) -> JSONValue {
        var item: JSONObject = ["type": .string(type), "loc": .array(loc), "msg": .string(message), "input": input]
        if let context { item["ctx"] = .object(context) }
        return .object(item)
    }

    /// The errors for missing `x-cipher-*` headers, in the order FastAPI reports them.
    static func missingHeaderErrors(_ names: [String]) -> [JSONValue] {
        names.map { error("missing", loc: ["header", .string($0)], "Field required", input: .null) }
    }

    /// Answers a route with a JSON body: FastAPI's 422 when `body` does not fit the model, else
    /// `handle`'s answer to the validated object.
    func answer(_ body: Data, _ handle: (JSONObject) -> StationResponse) -> StationResponse {
        switch validate(body) {
        case let .success(object): return handle(object)
        case let .failure(errors): return Self.unprocessable(errors.items)
        }
    }

    /// A 422 response listing `errors`.
    static func unprocessable(_ errors: [JSONValue]) -> StationResponse {
        .json(422, JSONOut.compact(["detail": .array(errors)]))
    }
}
