/** Reads an XML document in tests with saxes (a dependency of exceljs): well-formed, or it throws. */
import { SaxesParser } from 'saxes';

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  /** The text directly inside the element. */
  text: string;
  children: XmlElement[];
}

/** Parses a whole document (throws on anything not well-formed) into a small tree: its root element. */
export function parseXml(xml: string): XmlElement {
  const parser = new SaxesParser();
  const document: XmlElement = { name: '#document', attributes: {}, text: '', children: [] };
  const stack: XmlElement[] = [document];
  parser.on('error', (error) => {
    throw error;
  });
  parser.on('opentag', (tag) => {
    const element: XmlElement = {
      name: tag.name,
      attributes: tag.attributes as Record<string, string>,
      text: '',
      children: [],
    };
    stack.at(-1)!.children.push(element);
    stack.push(element);
  });
  parser.on('text', (text) => {
    stack.at(-1)!.text += text;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.write(xml).close();
  if (document.children.length !== 1) throw new Error('not one root element');
  return document.children[0]!;
}
