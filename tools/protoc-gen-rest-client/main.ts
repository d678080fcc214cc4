/** Entry point buf runs (buf.gen.yaml): reads a CodeGeneratorRequest on stdin, writes the response. */
import { runNodeJs } from '@bufbuild/protoplugin';
import { plugin } from './plugin';

runNodeJs(plugin);
