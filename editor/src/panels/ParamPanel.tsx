// The parameter panel of the selected node, built from its spec: the
// display and bypass flags, the node's doc and a field per parameter.
import { useEffect, useState } from "react";
import type { ParamSpec } from "../api";
import type { EddyNode } from "../graph";

export function ParamPanel({
  node,
  onDisplay,
  onBypass,
  onParam,
}: {
  node: EddyNode | undefined;
  onDisplay: (id: string) => void;
  onBypass: (id: string) => void;
  onParam: (id: string, name: string, value: unknown) => void;
}) {
  return (
    <div className="params" data-testid="params">
      {node ? (
        <>
          <h3>
            {node.id} <small>{node.data.spec.type}</small>
            <button data-testid="display-flag" className={node.data.display ? "on" : ""} onClick={() => onDisplay(node.id)}>
              display
            </button>
            <button
              data-testid="bypass-flag"
              className={node.data.bypass ? "on" : ""}
              title="Bypass: the node does not cook; each output passes on its first input of the same type"
              onClick={() => onBypass(node.id)}
            >
              bypass
            </button>
          </h3>
          <p className="doc">{node.data.spec.doc}</p>
          {node.data.spec.params.map((p) => (
            <ParamField key={p.name} spec={p} value={node.data.params[p.name]} onChange={(v) => onParam(node.id, p.name, v)} />
          ))}
        </>
      ) : (
        <p className="doc">Select a node to edit its parameters; double-click one to display it.</p>
      )}
    </div>
  );
}

// One parameter: a checkbox, a menu, or a text field that commits on Enter
// or on leaving it (numbers and vectors only when they parse).
function ParamField({ spec, value, onChange }: { spec: ParamSpec; value: unknown; onChange: (v: unknown) => void }) {
  const title = `${spec.doc}${spec.unit ? ` (${spec.unit})` : ""}${spec.min !== undefined ? ` min ${spec.min}` : ""}${
    spec.max !== undefined ? ` max ${spec.max}` : ""
  }`;
  const label = (
    <span className="param-name" title={title}>
      {spec.name}
      {spec.unit && <small> {spec.unit}</small>}
    </span>
  );
  const [text, setText] = useState(String(value ?? ""));
  useEffect(() => setText(Array.isArray(value) ? value.join(", ") : String(value ?? "")), [value]);
  const testid = `param-${spec.name}`;
  if (spec.type === "bool")
    return (
      <label className="param">
        {label}
        <input type="checkbox" data-testid={testid} checked={!!value} onChange={(e) => onChange(e.target.checked)} />
      </label>
    );
  if (spec.type === "enum")
    return (
      <label className="param">
        {label}
        <select data-testid={testid} value={String(value)} onChange={(e) => onChange(e.target.value)}>
          {spec.items?.map((i) => (
            <option key={i}>{i}</option>
          ))}
        </select>
      </label>
    );
  const commit = () => {
    if (spec.type === "float" || spec.type === "int") {
      const v = Number(text);
      if (!Number.isNaN(v)) onChange(spec.type === "int" ? Math.round(v) : v);
    } else if (spec.type === "vec3") {
      const v = text.split(",").map((x) => Number(x.trim()));
      if (v.length === 3 && v.every((x) => !Number.isNaN(x))) onChange(v);
    } else {
      onChange(text);
    }
  };
  return (
    <label className="param">
      {label}
      <input
        data-testid={testid}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === "Enter" && commit()}
      />
    </label>
  );
}
