"""An ONNX model file's graph as a GraphDef for TensorBoard's GRAPHS tab (SummaryWriter.add_onnx_graph): its inputs
and outputs as Variable nodes with dtype and shape, then each operator as a node named by its first output."""
import itertools

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef


def load_onnx_graph(fname):
    """The GraphDef of the ONNX model saved in fname (needs the onnx package)."""
    import onnx

    return parse(onnx.load(fname).graph)


def _variable_node(value_info):
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d.dim_value)
                                  for d in value_info.type.tensor_type.shape.dim])
    attrs = {"dtype": AttrValue(type=value_info.type.tensor_type.elem_type), "shape": AttrValue(shape=shape)}
    return NodeDef(name=value_info.name.encode(encoding="utf_8"), op="Variable", input=[], attr=attrs)


def _operator_node(node):
    # each attribute shown as its fields' values joined by " = "
    attributes = ", ".join(" = ".join(str(field[1]) for field in a.ListFields()) for a in node.attribute)
    return NodeDef(name=node.output[0].encode(encoding="utf_8"), op=node.op_type, input=node.input,
                   attr={"parameters": AttrValue(s=attributes.encode(encoding="utf_8"))})


def parse(graph):
    """An ONNX GraphProto as a GraphDef, printing each node's name as it goes (as torch does)."""
    nodes = []
    for value_info in itertools.chain(graph.input, graph.output):
        print(value_info.name)
        nodes.append(_variable_node(value_info))
    for node in graph.node:
        print(node.output[0])
        nodes.append(_operator_node(node))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
